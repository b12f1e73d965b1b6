// The threat searches of gomoku_threats.cc: wins by continuous fours (FindVcf, checked against
// a plain search) and by continuous threats (FindVct, checked against every reply). The checks
// SearchRoot makes around the search at the hard level's root are gomoku_root_test.cc's.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/random.h"
#include "engine/games/gomoku/gomoku.h"
#include "engine/search/search.h"
#include "tests/gomoku_test_util.h"

namespace ply {
namespace {

// Plays the attacker's `first` on `g` (left played) and every empty cell as the defender's
// reply in turn: `wins(g)` must hold for the attacker after each; a reply that saves the
// defender is named in the failure.
template <class Wins>
void ExpectWinAgainstEveryReply(Gomoku& g, Gomoku::Move first, Wins wins) {
  Gomoku::UndoInfo u;
  g.Make(first, u);
  MoveList<Gomoku::Move, Gomoku::kMaxMoves> replies;
  g.GenerateMoves(replies);
  for (Gomoku::Move reply : replies) {
    g.Make(reply, u);
    EXPECT_TRUE(wins(g)) << "the defender holds with " << g.MoveToText(reply);
    g.Unmake(reply, u);
  }
}

using gomoku_test::DoubleThreePosition;
using gomoku_test::ForEachFourPlayed;
using gomoku_test::ForEachRandomPosition;
using gomoku_test::FromMoves;
using gomoku_test::Make;
using gomoku_test::PlayMoves;
using gomoku_test::Position;
using gomoku_test::SevenFoursMoves;
using gomoku_test::SevenFoursPosition;
using gomoku_test::ThreatWinHolds;

// A win by continuous fours checked the plain way, for comparison with the engine's pattern
// tables: stones on a grid, fives found by walking the lines. The same rules as FindVcf: a
// five to play wins; so does a move that leaves two or more cells completing five, unless the
// defender has a five to play; otherwise each attacking move must leave exactly one such cell,
// which the defender takes. When that block gives the defender a five to play (one: two lose),
// the next attack is taking it, and it must again leave one or more cells completing five.
// `counter_fours` false gives up there instead (what FindVcf did before it went on).
class PlainVcf {
 public:
  explicit PlainVcf(const Gomoku& g, bool counter_fours = true)
      : n_(g.size()), exact_(g.exact_five()), counter_fours_(counter_fours) {
    for (int y = 0; y < n_; ++y) {
      for (int x = 0; x < n_; ++x) board_[y][x] = g.StoneAt(x, y);
    }
  }

  bool Wins(int attacker, int depth) {
    const int defender = 1 - attacker;
    int x = 0, y = 0;
    if (FiveCells(attacker, &x, &y) > 0) return true;
    const int defender_fives = FiveCells(defender, &x, &y);
    bool won = false;
    ForEachEmpty([&](int cx, int cy) {
      if (won || defender_fives > 0) return;
      board_[cy][cx] = attacker;
      won = FiveCells(attacker, &x, &y) >= 2;
      board_[cy][cx] = -1;
    });
    if (won) return true;
    if (depth == 0 || defender_fives >= 2 || (defender_fives == 1 && !counter_fours_)) {
      return false;
    }
    auto attack = [&](int cx, int cy) {
      board_[cy][cx] = attacker;
      int bx = 0, by = 0;
      const int fives = FiveCells(attacker, &bx, &by);
      if (fives >= 2) {
        won = true;  // a double four the defender, with no five of its own now, cannot stop
      } else if (fives == 1) {
        board_[by][bx] = defender;
        won = Wins(attacker, depth - 1);
        board_[by][bx] = -1;
      }
      board_[cy][cx] = -1;
    };
    if (defender_fives == 1) {
      attack(x, y);
      return won;
    }
    ForEachEmpty([&](int cx, int cy) {
      if (!won) attack(cx, cy);
    });
    return won;
  }

 private:
  template <class F>
  void ForEachEmpty(F&& f) {
    for (int y = 0; y < n_; ++y) {
      for (int x = 0; x < n_; ++x) {
        if (board_[y][x] < 0) f(x, y);
      }
    }
  }
  bool On(int x, int y) const { return x >= 0 && y >= 0 && x < n_ && y < n_; }
  bool MakesFive(int x, int y, int p) const {
    static constexpr int kDx[4] = {1, 0, 1, 1}, kDy[4] = {0, 1, 1, -1};
    for (int d = 0; d < 4; ++d) {
      int run = 1;
      for (int s = -1; s <= 1; s += 2) {
        for (int k = 1; On(x + s * k * kDx[d], y + s * k * kDy[d]) &&
                        board_[y + s * k * kDy[d]][x + s * k * kDx[d]] == p;
             ++k) {
          ++run;
        }
      }
      if (exact_ ? run == 5 : run >= 5) return true;
    }
    return false;
  }
  // How many empty cells make five for p; one of them in (x, y).
  int FiveCells(int p, int* x, int* y) {
    int count = 0;
    ForEachEmpty([&](int cx, int cy) {
      if (MakesFive(cx, cy, p)) {
        ++count;
        *x = cx;
        *y = cy;
      }
    });
    return count;
  }

  int n_;
  bool exact_;
  bool counter_fours_;
  int board_[Gomoku::kMaxSize][Gomoku::kMaxSize];
};

TEST(Gomoku, VcfAgreesWithAPlainSearchOnRandomPositions) {
  // Positions from random games among the AI's candidates (so that fours and threes abound), on
  // both rules; every one is asked to depth 3 with no node limit. Some wins go through a block
  // of a counter-four that is itself a four (FindVcf gave those up before).
  int wins = 0, checked = 0, through_counter_fours = 0;
  auto compare = [&](Gomoku& at) {
    Gomoku copy = at;
    const bool engine = copy.FindVcf(/*max_depth=*/3, /*max_nodes=*/1 << 24) != Gomoku::kNoMove;
    const bool plain = PlainVcf(at).Wins(at.SideToMove(), /*depth=*/3);
    ASSERT_EQ(engine, plain) << at.Render();
    wins += plain;
    through_counter_fours +=
        plain && !PlainVcf(at, /*counter_fours=*/false).Wins(at.SideToMove(), 3);
    ++checked;
  };
  // Each position, and the positions after each four the side to move could make.
  ForEachRandomPosition(/*size=*/11, /*seed=*/21, /*games=*/24, /*first_ply=*/8, [&](Gomoku& g) {
    compare(g);
    ForEachFourPlayed(g, compare);
  });
  // Both answers occur often enough for the comparison to mean something (24 games: 184 wins
  // in 1139 positions, 5 through a counter-four).
  EXPECT_GE(wins, 20) << checked;
  EXPECT_GE(checked - wins, 20) << checked;
  EXPECT_GE(through_counter_fours, 3) << wins;
}

TEST(Gomoku, FoursCalledDeadEndsAreDeadEnds) {
  // The VCF search skips a four that its block ends (Gomoku::FourLeadsNowhere, read off the
  // lines) rather than playing both: in every position of random games, and after each four
  // the side to move could make, every four it calls a dead end is one once played on a copy
  // (for exact fives it calls none).
  int dead_ends = 0, positions = 0;
  auto check = [&](Gomoku& at) {
    ++positions;
    const int before = dead_ends;
    ASSERT_EQ(at.CheckFourDeadEnds(&dead_ends), "") << at.Render();
    if (at.exact_five()) {
      ASSERT_EQ(dead_ends, before);
    }
  };
  ForEachRandomPosition(/*size=*/15, /*seed=*/23, /*games=*/30, /*first_ply=*/4, [&](Gomoku& g) {
    check(g);
    ForEachFourPlayed(g, check);
  });
  // Enough of them for the check to mean something.
  EXPECT_GE(dead_ends, 200) << positions;
}

TEST(Gomoku, FindsAWinByContinuousFours) {
  Gomoku g = SevenFoursPosition();
  Gomoku copy = g;
  EXPECT_EQ(copy.FindVcf(/*max_depth=*/6, /*max_nodes=*/10000), Gomoku::kNoMove);
  Gomoku::Move first = copy.FindVcf(/*max_depth=*/8, /*max_nodes=*/10000);
  EXPECT_EQ(g.MoveToText(first), "i12");
  EXPECT_TRUE(copy == g);
  // An opening position holds no such win.
  Gomoku white = Position({"h8", "h9", "a1"});
  EXPECT_EQ(white.FindVcf(/*max_depth=*/16, /*max_nodes=*/10000), Gomoku::kNoMove);
  // The search proves the win within the hard level's budget.
  auto searcher = std::make_unique<Searcher<Gomoku>>(8);
  auto r = searcher->Search(g, {.time_ms = 1000});
  EXPECT_EQ(g.MoveToText(r.best_move), "i12");
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.score, WinIn(17)) << g.Render();
}

TEST(Gomoku, FindsAWinByContinuousThreats) {
  Gomoku g = DoubleThreePosition();
  Gomoku copy = g;
  EXPECT_EQ(copy.FindVcf(Gomoku::kMaxVcfDepth, 100000), Gomoku::kNoMove);
  const Gomoku::Move win = copy.FindVct(/*max_depth=*/4, /*max_nodes=*/100000);
  ASSERT_NE(win, Gomoku::kNoMove);
  EXPECT_EQ(g.MoveToText(win), "k8");
  EXPECT_TRUE(copy == g);
  EXPECT_EQ(copy.CheckIncrementalState(), "");
  // Checked another way: whatever White answers, Black then wins by fours (an open four is a
  // line of fours of length one).
  ExpectWinAgainstEveryReply(g, win, [](Gomoku& after) {
    return after.FindVcf(Gomoku::kMaxVcfDepth, 100000) != Gomoku::kNoMove;
  });
  // Without a threat to make there is none: the opening, and a position already won by fours
  // is found by both.
  Gomoku opening = Position({"h8", "h9"});
  EXPECT_EQ(opening.FindVct(8, 100000), Gomoku::kNoMove);
  Gomoku fours = SevenFoursPosition();
  EXPECT_EQ(fours.MoveToText(fours.FindVct(Gomoku::kMaxVcfDepth, 100000)), "i12");
}

TEST(Gomoku, FindVctAfterAFailedFindVcfSkipsItWithTheSameAnswer) {
  // SearchRoot's checks run FindVcf and then FindVct with fours_searched: the VCF search is not
  // repeated (fewer positions), and the answer is the one FindVct gives on its own.
  int positions = 0, threats = 0, saved = 0;
  ForEachRandomPosition(/*size=*/11, /*seed=*/7, /*games=*/8, /*first_ply=*/8, [&](Gomoku& g) {
    Gomoku copy = g;
    int64_t vcf_nodes = 0, full_nodes = 0, skipped_nodes = 0;
    if (copy.FindVcf(Gomoku::kMaxVcfDepth, 4000, &vcf_nodes) != Gomoku::kNoMove) return;
    const Gomoku::Move full = copy.FindVct(/*max_depth=*/6, 2000, &full_nodes);
    const Gomoku::Move skipped =
        copy.FindVct(/*max_depth=*/6, 2000, &skipped_nodes, /*fours_searched=*/true);
    ASSERT_EQ(full, skipped) << g.Render();
    EXPECT_LE(skipped_nodes, full_nodes);
    EXPECT_TRUE(copy == g);
    ++positions;
    threats += full != Gomoku::kNoMove;
    saved += skipped_nodes < full_nodes;
  });
  // Both answers occur, and the skip saves work somewhere (216 positions, 30 won by threats,
  // 55 with fewer positions visited).
  EXPECT_GE(threats, 5) << positions;
  EXPECT_GE(positions - threats, 20) << positions;
  EXPECT_GE(saved, 5) << positions;
}

TEST(Gomoku, ACounterFourRefutesTheThreats) {
  // The same Black stones, but White (c2 d2 e2 blocked by Black's b2, and f3 f4) makes a four
  // and an open three at f2: against any three of Black's, White wins by fours first.
  Gomoku g = Position({"h8", "c2", "i8", "d2", "k10", "e2", "k9", "f3", "b2", "f4"});
  EXPECT_EQ(g.ClassAt(1, *g.ParseMove("f2")), Gomoku::kMakesFourThree);
  EXPECT_EQ(g.ClassAt(0, *g.ParseMove("k8")), Gomoku::kMakesDoubleThree);
  Gomoku copy = g;
  EXPECT_EQ(copy.FindVct(/*max_depth=*/6, /*max_nodes=*/200000), Gomoku::kNoMove);
  EXPECT_TRUE(copy == g);
  // Once Black has taken f2 the double three wins again.
  PlayMoves(g, {"f2", "a15"});
  EXPECT_EQ(g.MoveToText(g.FindVct(/*max_depth=*/4, /*max_nodes=*/200000)), "k8");
}

TEST(Gomoku, ThreatWinsHoldAgainstEveryReplyOnRandomPositions) {
  // A two-move win by threats (FindVct at depth 2, that no search by fours finds) is checked
  // against every empty cell as the reply, not only the replies FindVct tried: after any reply
  // that is not a four, the attacker must still win at once, by fours, or by one more threat.
  int found = 0, replies = 0;
  ForEachRandomPosition(/*size=*/13, /*seed=*/5, /*games=*/12, /*first_ply=*/6, [&](Gomoku& g) {
    Gomoku copy = g;
    const Gomoku::Move win = copy.FindVct(/*max_depth=*/2, /*max_nodes=*/1 << 16);
    if (win == Gomoku::kNoMove || copy.FindVcf(Gomoku::kMaxVcfDepth, 1 << 16) != Gomoku::kNoMove) {
      return;
    }
    ++found;
    const int attacker = g.SideToMove();
    Gomoku::UndoInfo u;
    copy.Make(win, u);
    MoveList<Gomoku::Move, Gomoku::kMaxMoves> all;
    copy.GenerateMoves(all);
    for (Gomoku::Move reply : all) {
      if (copy.ClassAt(1 - attacker, reply) >= Gomoku::kMakesFour &&
          copy.ClassAt(1 - attacker, reply) != Gomoku::kMakesDoubleThree) {
        continue;  // a counter-four: answered by a forced block, not checked here
      }
      copy.Make(reply, u);
      ++replies;
      const bool still = copy.FindVcf(Gomoku::kMaxVcfDepth, 20000) != Gomoku::kNoMove ||
                         copy.FindVct(/*max_depth=*/1, 20000) != Gomoku::kNoMove;
      ASSERT_TRUE(still) << copy.Render() << "after " << g.MoveToText(win) << " "
                         << g.MoveToText(reply);
      copy.Unmake(reply, u);
    }
  });
  // Enough wins by threats turn up for the check to mean something.
  EXPECT_GE(found, 10) << replies;
}

// Black to move against White's four (g4 h5 i6 j7, closed at f3): the block at k8 is also
// Black's double three (h8 i8 . k8 and k8 k9 k10), which wins. The threats search used to give
// up whenever the defender had a five to play.
TEST(Gomoku, ThreatWinsGoOnThroughABlockThatIsAThreat) {
  Gomoku g = Position({"h8", "g4", "i8", "h5", "k10", "i6", "k9", "j7", "f3", "a15"});
  ASSERT_EQ(g.ClassAt(1, *g.ParseMove("k8")), Gomoku::kMakesFive);
  ASSERT_EQ(g.ClassAt(0, *g.ParseMove("k8")), Gomoku::kMakesDoubleThree);
  Gomoku copy = g;
  EXPECT_EQ(copy.FindVcf(Gomoku::kMaxVcfDepth, 100000), Gomoku::kNoMove);
  EXPECT_EQ(g.MoveToText(copy.FindVct(/*max_depth=*/4, /*max_nodes=*/100000)), "k8");
  EXPECT_TRUE(copy == g);
  EXPECT_EQ(copy.CheckIncrementalState(), "");
  std::string line;
  EXPECT_TRUE(ThreatWinHolds(copy, 3, &line)) << line;
  // With Black's other stones far away the block makes nothing: no win.
  Gomoku quiet = Position({"a1", "g4", "c1", "h5", "e1", "i6", "a3", "j7", "f3", "a15"});
  EXPECT_EQ(quiet.ClassAt(0, *quiet.ParseMove("k8")), Gomoku::kQuiet);
  EXPECT_EQ(quiet.FindVct(/*max_depth=*/6, /*max_nodes=*/100000), Gomoku::kNoMove);
}

// Black to move against White's four (d4 e5 f6 g7, closed at c3): the block at h8 makes two
// fours (e8 f8 g8 h8 closed at d8, h5 h6 h7 h8 closed at h4), which White cannot both block.
TEST(Gomoku, ThreatWinsCountADoubleFourMadeByABlock) {
  Gomoku g = Position(
      {"e8", "d8", "f8", "h4", "g8", "d4", "h5", "e5", "h6", "f6", "c3", "g7", "h7", "a15"});
  ASSERT_EQ(g.ClassAt(1, *g.ParseMove("h8")), Gomoku::kMakesFive);
  ASSERT_EQ(g.ClassAt(0, *g.ParseMove("h8")), Gomoku::kMakesWinningFour);
  Gomoku copy = g;
  // A win by fours too: the block is the attacker's first four (two of them).
  EXPECT_EQ(g.MoveToText(copy.FindVcf(Gomoku::kMaxVcfDepth, 100000)), "h8");
  EXPECT_EQ(g.MoveToText(copy.FindVct(/*max_depth=*/1, /*max_nodes=*/1000)), "h8");
  EXPECT_TRUE(copy == g);
  std::string line;
  EXPECT_TRUE(ThreatWinHolds(copy, 1, &line)) << line;
  // With one of the fours closed (White on i8 too) the block is a single four: no win.
  Gomoku closed = Position({"e8", "d8", "f8", "h4", "g8", "d4", "h5", "e5", "h6", "f6", "c3", "g7",
                            "h7", "i8", "a1", "a15"});
  EXPECT_EQ(closed.FindVct(/*max_depth=*/6, /*max_nodes=*/100000), Gomoku::kNoMove);
}

TEST(Gomoku, ThreatWinsHoldAgainstEveryReplyAtEveryLevel) {
  // Wins by threats of up to three threats (FindVct at depth 3, none by fours) in random games,
  // checked against every reply at every level, counter-fours included. Besides each position
  // itself, the position after each four the side to move could make: there the opponent has
  // that four to block, and its win, if any, goes through the block.
  int found = 0, blocks = 0;
  auto check = [&](Gomoku& g) {
    Gomoku copy = g;
    if (copy.FindVcf(Gomoku::kMaxVcfDepth, 1 << 16) != Gomoku::kNoMove ||
        copy.FindVct(/*max_depth=*/3, 1 << 16) == Gomoku::kNoMove) {
      return false;
    }
    std::string line;
    EXPECT_TRUE(ThreatWinHolds(copy, 3, &line)) << g.Render() << "refuted by " << line;
    EXPECT_TRUE(copy == g);
    return true;
  };
  ForEachRandomPosition(/*size=*/13, /*seed=*/8, /*games=*/10, /*first_ply=*/6, [&](Gomoku& g) {
    found += check(g);
    ForEachFourPlayed(g, [&](Gomoku& after) { blocks += check(after); });
  });
  EXPECT_GE(found, 10) << blocks;
  EXPECT_GE(blocks, 3) << found;
}

TEST(Gomoku, ThreatSearchRemembersWhatItProvedWithinOneCall) {
  // Black to move after eight stones of a game against AIWine wins by threats from e8 (the
  // position of ThreatsNearTheLastOneProveAWinTheWholeBoardMissed), a proof that reaches the
  // same positions by many move orders. The search keeps what it proved for the length of one
  // call, and each call starts afresh: what it finds does not depend on the calls before it.
  // (The example here was a ten-threat win of Black's from c6 after d7 in a game medium won,
  // "h8 h9 g9 f10 g8 g10 e10 f9 f11 e8 h11 d9 i11 g11 f8 d7": since the plain threats after the
  // first keep to the lines of the last one, FindVct no longer proves it within 200000.)
  Gomoku g = FromMoves({"h8", "h7", "g8", "h6", "f7", "i8", "g6", "g5"});
  Gomoku copy = g;
  int64_t used = 0;
  EXPECT_EQ(g.MoveToText(copy.FindVct(Gomoku::kRootVctDepth, 200000, &used)), "e8");
  EXPECT_LT(used, 200000);
  EXPECT_TRUE(copy == g);
  int64_t again = 0;
  EXPECT_EQ(g.MoveToText(copy.FindVct(Gomoku::kRootVctDepth, 200000, &again)), "e8");
  EXPECT_EQ(again, used);
  EXPECT_EQ(copy.FindVct(Gomoku::kRootVctDepth, 2000, &again), Gomoku::kNoMove);
  EXPECT_EQ(again, 2000);
  EXPECT_EQ(g.MoveToText(copy.FindVct(Gomoku::kRootVctDepth, 200000, &again)), "e8");
  EXPECT_EQ(again, used);
  EXPECT_EQ(copy.CheckIncrementalState(), "");
}

// Wins by threats from random games among the AI's candidates (the side to move wins; no win by
// fours), each with the cell FindVct plays, found within 1665, 302 and 2756 positions whether
// it may go six threats deep or the root's kRootVctDepth (2691, 506 and 2762 before the plain
// threats after the first kept to the lines of the last one; the third was then won from b11).
// Regression pins for the threats search, and a record of what neither the alpha-beta search nor a
// one-pass threats search sees: a depth-4 search scores them 416, 1224 and 451 (a proven win scores
// over 10000), and FindVct when it searched to kRootVctDepth in one pass found none of the first
// two within 100000 positions (its budget went into the long lines of its first attacks) and the
// third after 58771. Deepening a threat a pass finds them at any depth in the same few thousand.
struct ThreatWin {
  std::vector<std::string> moves;
  const char* first;
};
std::vector<ThreatWin> ThreatWinsFromRandomGames() {
  return {
      {{"h8", "i9", "h10", "i8", "h7", "h6", "i6", "f9", "g9", "i11", "h9", "h11", "i12", "k11",
        "l11"},
       "g11"},
      {{"h8",  "i9",  "i10", "f10", "f12", "h11", "f9", "h7", "i7",  "g8", "h10", "j6",
        "k10", "j10", "g9",  "j9",  "j8",  "e7",  "l9", "g5", "i12", "m8", "h12", "j12"},
       "j11"},
      {{"h8", "h9", "g10", "g7", "e9",  "e10", "h7", "g9",  "g6",  "i8",  "g8", "j9",
        "i9", "e8", "j5",  "i6", "i10", "d9",  "c8", "c10", "a12", "j10", "j8"},
       "d10"},
  };
}

// Black to move after eight stones of a game against AIWine (tests/data/gomoku/
// games_vs_aiwine.txt) wins by threats. Trying every plain four and open three on the board at
// every step, FindVct did not prove it within 64,000 positions; with the plain threats after the
// first kept on the lines of the last one, it does within 37,012, starting with e8.
TEST(Gomoku, ThreatsNearTheLastOneProveAWinTheWholeBoardMissed) {
  Gomoku g = FromMoves({"h8", "h7", "g8", "h6", "f7", "i8", "g6", "g5"});
  Gomoku copy = g;
  ASSERT_EQ(copy.FindVcf(Gomoku::kMaxVcfDepth, 100000), Gomoku::kNoMove);
  int64_t used = 0;
  const Gomoku::Move first = copy.FindVct(Gomoku::kRootVctDepth, 64000, &used);
  ASSERT_NE(first, Gomoku::kNoMove);
  EXPECT_EQ(g.MoveToText(first), "e8");
  EXPECT_LE(used, 40000);
  EXPECT_TRUE(copy == g);
  // Whatever White answers (every empty cell), Black still wins by threats.
  ExpectWinAgainstEveryReply(g, first, [](Gomoku& after) {
    return after.FindVct(Gomoku::kRootVctDepth, 1 << 17) != Gomoku::kNoMove;
  });
}

TEST(Gomoku, ThreatWinsFromRandomGamesHoldAgainstEveryReply) {
  for (const ThreatWin& win : ThreatWinsFromRandomGames()) {
    Gomoku g = FromMoves(win.moves);
    SCOPED_TRACE(win.first);
    Gomoku copy = g;
    ASSERT_EQ(copy.FindVcf(Gomoku::kMaxVcfDepth, 100000), Gomoku::kNoMove);
    int64_t used = 0;
    const Gomoku::Move first = copy.FindVct(/*max_depth=*/6, 100000, &used);
    EXPECT_EQ(g.MoveToText(first), win.first);
    EXPECT_LT(used, 3000);
    EXPECT_TRUE(copy == g);
    // As deep as the root searches, the short win is found as soon.
    int64_t deep = 0;
    EXPECT_EQ(copy.FindVct(Gomoku::kRootVctDepth, 100000, &deep), first);
    EXPECT_EQ(deep, used);
    if (first == Gomoku::kNoMove) continue;
    // Whatever the defender answers (every empty cell), the attacker still wins by threats.
    ExpectWinAgainstEveryReply(g, first, [](Gomoku& after) {
      return after.FindVct(/*max_depth=*/6, 100000) != Gomoku::kNoMove;
    });
    EXPECT_EQ(g.CheckIncrementalState(), "");
  }
}

}  // namespace
}  // namespace ply
