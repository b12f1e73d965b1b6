#include "engine/games/gomoku/gomoku.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/core/random.h"
#include "engine/registry/registry.h"
#include "engine/search/perft.h"
#include "engine/search/search.h"
#include "engine/tool/gomoku/pbrain_pipe.h"
#include "tests/conformance.h"
#include "tests/gomoku_test_util.h"

namespace ply {
namespace {

using gomoku_test::Make;
using gomoku_test::PlayMoves;
using gomoku_test::PlayRandomSearchMove;
using gomoku_test::Position;
using gomoku_test::SevenFoursMoves;
using gomoku_test::SevenFoursPosition;

TEST(Gomoku, PerftCountsEveryEmptyCell) {
  Gomoku g = Make();
  EXPECT_EQ(Perft(g, 1), 225u);
  EXPECT_EQ(Perft(g, 2), 225u * 224);
  EXPECT_EQ(Perft(g, 3), 225u * 224 * 223);
  Gomoku big = Make({{"size", "19"}});
  EXPECT_EQ(Perft(big, 2), 361u * 360);
}

TEST(Gomoku, PerftOnFiveByFiveCountsFinishedGames) {
  // No five can exist before the ninth stone, so the first eight plies are plain products.
  Gomoku g = Make({{"size", "5"}});
  uint64_t expected = 1;
  for (int d = 1; d <= 5; ++d) {
    expected *= static_cast<uint64_t>(26 - d);
    EXPECT_EQ(Perft(g, d), expected) << "depth " << d;
  }
}

TEST(Gomoku, PassesConformanceOnEveryVariant) {
  testing::RunConformance(Make(), 3, 1);
  testing::RunConformance(Make({{"rule", "exact"}}), 3, 2);
  testing::RunConformance(Make({{"size", "5"}}), 40, 3);
  testing::RunConformance(Make({{"size", "7"}, {"rule", "exact"}}), 20, 4);
  testing::RunConformance(Make({{"size", "20"}}), 1, 5);
}

TEST(Gomoku, RejectsBadOptions) {
  EXPECT_FALSE(Gomoku::Create({{"size", "4"}}).ok());
  EXPECT_FALSE(Gomoku::Create({{"size", "21"}}).ok());
  EXPECT_FALSE(Gomoku::Create({{"rule", "renju"}}).ok());
  EXPECT_EQ(Make({{"size", "19"}, {"rule", "exact"}}).EffectiveOptions(),
            (GameOptions{{"size", "19"}, {"rule", "exact"}}));
}

TEST(Gomoku, NotationNamesColumnsFromTheLeftAndRowsFromTheBottom) {
  Gomoku g = Make();
  EXPECT_EQ(*g.ParseMove("h8"), Gomoku::CellAt(7, 7));
  EXPECT_EQ(*g.ParseMove("a1"), Gomoku::CellAt(0, 14));
  EXPECT_EQ(*g.ParseMove("O15"), Gomoku::CellAt(14, 0));
  EXPECT_EQ(g.MoveToText(Gomoku::CellAt(14, 0)), "o15");
  for (const char* bad : {"", "h", "8h", "p1", "a0", "a16", "h8x", "-1", "h 8"}) {
    EXPECT_EQ(g.ParseMove(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  PlayMoves(g, {"h8"});
  auto taken = g.ParseMove("h8");
  EXPECT_EQ(taken.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(taken.status().message().find("h8"), std::string_view::npos);
}

TEST(Gomoku, RenderShowsCoordinatesOnTheEdges) {
  Gomoku g = Position({"h8", "a1"}, {{"size", "9"}});
  EXPECT_EQ(g.Render(),
            "    a b c d e f g h i\n"
            "  9 . . . . . . . . . 9\n"
            "  8 . . . . . . . X . 8\n"
            "  7 . . . . . . . . . 7\n"
            "  6 . . . . . . . . . 6\n"
            "  5 . . . . . . . . . 5\n"
            "  4 . . . . . . . . . 4\n"
            "  3 . . . . . . . . . 3\n"
            "  2 . . . . . . . . . 2\n"
            "  1 O . . . . . . . . 1\n"
            "    a b c d e f g h i\n");
}

TEST(Gomoku, FiveWinsInEveryDirection) {
  struct Case {
    std::initializer_list<const char*> black;
  };
  const std::vector<std::vector<const char*>> lines = {
      {"d4", "e4", "f4", "g4", "h4"},  // row
      {"d4", "d5", "d6", "d7", "d8"},  // column
      {"d4", "e5", "f6", "g7", "h8"},  // diagonal up
      {"d8", "e7", "f6", "g5", "h4"},  // diagonal down
  };
  const char* white[] = {"a15", "c15", "e15", "g15"};
  for (const auto& line : lines) {
    Gomoku g = Make();
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(g.GetOutcome(), Outcome::kOngoing);
      Gomoku::UndoInfo u;
      g.Make(*g.ParseMove(line[i]), u);
      if (i < 4) g.Make(*g.ParseMove(white[i]), u);
    }
    EXPECT_EQ(g.GetOutcome(), Outcome::kLoss) << g.Render();
    EXPECT_EQ(g.Status().winner, 0);
    EXPECT_STREQ(g.Status().reason, "five in a row");
  }
}

TEST(Gomoku, OverlinesWinOnlyInFreestyle) {
  // Black a1 b1 c1 e1 f1, then d1 makes six.
  for (const char* rule : {"freestyle", "exact"}) {
    Gomoku g = Position({"a1", "a15", "b1", "b15", "c1", "c15", "e1", "e15", "f1", "f15"},
                        {{"rule", rule}});
    ASSERT_EQ(g.GetOutcome(), Outcome::kOngoing);
    PlayMoves(g, {"d1"});
    EXPECT_EQ(g.GetOutcome() == Outcome::kLoss, std::string(rule) == "freestyle") << rule;
  }
}

TEST(Gomoku, RecognisesLineShapes) {
  const Gomoku::Move h8 = Gomoku::CellAt(7, 7);
  // Black f8 g8 i8: playing h8 makes an open four along the row (direction 0).
  Gomoku g = Position({"f8", "a1", "g8", "a3", "i8", "a5"});
  EXPECT_EQ(g.ShapeAt(0, h8, 0), Gomoku::kOpenFour);
  EXPECT_EQ(g.ClassAt(0, h8), Gomoku::kMakesWinningFour);
  // Blocked on one side it is only a four.
  Gomoku closed = Position({"f8", "e8", "g8", "a3", "i8", "a5"});
  EXPECT_EQ(closed.ShapeAt(0, h8, 0), Gomoku::kFour);
  // g8 i8 with space: h8 makes an open three; with a split, f8 h8 i8 (g8 empty) too.
  Gomoku three = Position({"g8", "a1", "i8", "a3"});
  EXPECT_EQ(three.ShapeAt(0, h8, 0), Gomoku::kOpenThree);
  Gomoku split = Position({"f8", "a1", "i8", "a3"});
  EXPECT_EQ(split.ShapeAt(0, h8, 0), Gomoku::kOpenThree);
  Gomoku two = Position({"i8", "a1"});
  EXPECT_EQ(two.ShapeAt(0, h8, 0), Gomoku::kOpenTwo);
  EXPECT_EQ(two.ShapeAt(1, h8, 0), Gomoku::kOne);
}

TEST(Gomoku, ExactFiveIgnoresFoursThatOnlyMakeOverlines) {
  // Black e8 f8 g8 . i8 j8 on row 8: h8 makes six. In freestyle that is a win (kFive); under
  // exact five it is nothing, and d8 + e8..g8 is a four that can only grow into an overline
  // when the next cell is taken by own stones.
  for (const char* rule : {"freestyle", "exact"}) {
    Gomoku g =
        Position({"e8", "a1", "f8", "a3", "g8", "a5", "i8", "a7", "j8", "a9"}, {{"rule", rule}});
    Gomoku::Shape s = g.ShapeAt(0, Gomoku::CellAt(7, 7), 0);
    if (std::string(rule) == "freestyle") {
      EXPECT_EQ(s, Gomoku::kFive);
    } else {
      EXPECT_NE(s, Gomoku::kFive);
      EXPECT_LT(s, Gomoku::kFour);
    }
  }
  // e8 f8 g8 h8 with j8 black and d8 white: i8 would make six; only under freestyle is i8 a
  // five, so the four is a threat only there.
  for (const char* rule : {"freestyle", "exact"}) {
    Gomoku g = Position({"e8", "d8", "f8", "a3", "g8", "a5", "j8", "a7"}, {{"rule", rule}});
    Gomoku::Shape s = g.ShapeAt(0, Gomoku::CellAt(7, 7), 0);
    EXPECT_EQ(s == Gomoku::kFour || s == Gomoku::kOpenFour, std::string(rule) == "freestyle")
        << rule << " " << int(s);
  }
}

TEST(Gomoku, CandidateMovesStayNearTheStones) {
  Gomoku g = Make();
  MoveList<Gomoku::Move, Gomoku::kMaxMoves> moves;
  g.GenerateSearchMoves(moves);
  ASSERT_EQ(moves.size(), 1);
  EXPECT_EQ(g.MoveToText(moves[0]), "h8");
  PlayMoves(g, {"h8"});
  moves.clear();
  g.GenerateSearchMoves(moves);
  // The best ten by move order of the 24 cells within distance 2.
  EXPECT_EQ(moves.size(), 10);
  for (Gomoku::Move m : moves) {
    EXPECT_LE(std::abs(Gomoku::XOf(m) - 7), 2);
    EXPECT_LE(std::abs(Gomoku::YOf(m) - 7), 2);
  }
}

TEST(Gomoku, CandidatesNarrowToBlocksWhenTheOpponentHasAFour) {
  // Black has four on row 8 (e8..h8), closed by d8: White must take i8.
  Gomoku g = Position({"e8", "d8", "f8", "a1", "g8", "a3", "h8"});
  MoveList<Gomoku::Move, Gomoku::kMaxMoves> moves;
  g.GenerateSearchMoves(moves);
  ASSERT_EQ(moves.size(), 1);
  EXPECT_EQ(g.MoveToText(moves[0]), "i8");
}

TEST(Gomoku, EvaluationIsSymmetric) {
  Gomoku a = Position({"h8", "h9", "i9", "g7"});
  Gomoku b = Position({"h8", "h7", "i7", "g9"});  // mirrored top to bottom
  EXPECT_EQ(a.Evaluate(), b.Evaluate());
  // A side with an open three is better off than its opponent.
  Gomoku three = Position({"g8", "a1", "h8", "a3", "i8"});  // White to move, Black has g8-i8
  EXPECT_LT(three.Evaluate(), 0);
}

TEST(Gomoku, MoveOrderPutsWinsThenBlocksThenThreats) {
  // Black (to move) has e8..h8 closed at d8: i8 wins. White has c3..e3 open: b3 / f3 block.
  Gomoku g = Position({"e8", "d8", "f8", "c3", "g8", "d3", "h8", "e3"});
  ASSERT_EQ(g.SideToMove(), 0);
  const int win = g.MoveOrderScore(*g.ParseMove("i8"));
  const int block = g.MoveOrderScore(*g.ParseMove("f3"));
  const int quiet = g.MoveOrderScore(*g.ParseMove("m13"));
  EXPECT_GT(win, block);
  EXPECT_GT(block, quiet);
  // The history heuristic adds at most 65536: a game order of 100000 and up dominates it.
  EXPECT_GE(quiet, 100000);
}

TEST(Gomoku, LevelsIncludeTheGreedyBaseline) {
  std::vector<Difficulty> levels = Gomoku::Levels();
  for (const char* name : {"beginner", "easy", "medium", "hard", "greedy"}) {
    EXPECT_NE(FindLevel(levels, name), nullptr) << name;
  }
  // Only the baseline goes through the game's own chooser.
  for (const Difficulty& d : levels) {
    EXPECT_FALSE(d.perfect) << d.name;
    EXPECT_EQ(d.policy, d.name == "greedy" ? "greedy" : "") << d.name;
  }
}

TEST(Gomoku, SearchWinsAtOnceAndBlocksFours) {
  auto searcher = std::make_unique<Searcher<Gomoku>>(8);
  Gomoku win = Position({"e8", "e9", "f8", "f9", "g8", "g9", "h8", "a1"});
  auto r = searcher->Search(win, {.max_depth = 3});
  EXPECT_TRUE(win.MoveToText(r.best_move) == "d8" || win.MoveToText(r.best_move) == "i8");
  EXPECT_EQ(r.score, WinIn(1));
  // White must stop Black's open three f8-h8 from growing into an open four.
  Gomoku defend = Position({"f8", "a1", "g8", "a3", "h8"});
  auto d = searcher->Search(defend, {.max_depth = 4});
  std::string move = defend.MoveToText(d.best_move);
  EXPECT_TRUE(move == "e8" || move == "i8" || move == "d8" || move == "j8") << move;
}

TEST(Gomoku, EvaluationSeesWinsByFoursBeyondTheHorizon) {
  // Positional scores stay within +-10000; a line of fours found at the leaf scores beyond.
  Gomoku g = SevenFoursPosition();
  const Gomoku before = g;
  EXPECT_GT(g.Evaluate(), 10000);
  EXPECT_TRUE(g == before);
  // After Black's first four, White must block, and Black's fours go on: White is lost.
  PlayMoves(g, {"i12"});
  EXPECT_LT(g.Evaluate(), -10000);
  // A quiet opening is scored by its shapes.
  EXPECT_LT(std::abs(Position({"h8", "h9", "i9"}).Evaluate()), 10000);
}

TEST(Gomoku, SearchCutMidIterationKeepsARootMoveThatScoredBetter) {
  // Node budgets stop the search at many points inside its iterations. With
  // keep_partial_iteration it may play another root move than the last finished iteration's,
  // but only one that the cut iteration searched to the end with a higher score: checked here
  // by searching both replies, fresh, to the cut iteration's depth less one.
  int switched = 0;
  // Two openings where some budget cuts an iteration after a better root move (with the
  // stone-centred evaluation: the budgets that switch move with the evaluation).
  const std::vector<std::vector<std::string>> openings = {
      {"h6", "g9", "e9", "f8", "e7", "f10"}, {"h8", "f8", "h9", "g8", "j10", "i7", "g7", "i9"}};
  for (const std::vector<std::string>& opening : openings) {
    for (int64_t budget = 2500; budget <= 12500; budget += 1000) {
      Gomoku g = gomoku_test::FromMoves(opening);
      auto plain = std::make_unique<Searcher<Gomoku>>(8);
      auto partial = std::make_unique<Searcher<Gomoku>>(8);
      auto a = plain->Search(g, {.max_nodes = budget});
      auto b = partial->Search(g, {.max_nodes = budget, .keep_partial_iteration = true});
      ASSERT_EQ(a.depth, b.depth);
      if (a.best_move == b.best_move || !a.stopped) continue;
      ++switched;
      auto reply_score = [&](Gomoku::Move m) {
        Gomoku child = g;
        Gomoku::UndoInfo u;
        child.Make(m, u);
        auto fresh = std::make_unique<Searcher<Gomoku>>(8);
        return -fresh->Search(child, {.max_depth = a.depth}).score;
      };
      EXPECT_GT(reply_score(b.best_move), reply_score(a.best_move))
          << "budget " << budget << ": " << g.MoveToText(a.best_move) << " -> "
          << g.MoveToText(b.best_move);
    }
  }
  EXPECT_GT(switched, 0);
}

TEST(Gomoku, GreedyTakesFivesAndBlocksFours) {
  Gomoku win = Position({"e8", "e9", "f8", "f9", "g8", "g9", "h8", "i9"});
  std::string m = win.MoveToText(win.GreedyMove(1));
  EXPECT_TRUE(m == "d8" || m == "i8") << m;
  Gomoku block = Position({"e8", "e9", "f8", "f9", "g8", "a1", "h8"});  // White to move
  std::string b = block.MoveToText(block.GreedyMove(1));
  EXPECT_TRUE(b == "d8" || b == "i8") << b;
}

TEST(Gomoku, GreedyLevelIsReachableThroughTheRegistry) {
  const GameInfo* info = FindGame("gomoku");
  ASSERT_NE(info, nullptr);
  const Difficulty* greedy = FindLevel(info->levels, "greedy");
  ASSERT_NE(greedy, nullptr);
  auto game = ReplayGame("gomoku", {}, {"h8", "h9"});
  ASSERT_TRUE(game.ok()) << game.status();
  auto report = (*game)->ChooseMove({.level = *greedy, .seed = 7});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->depth, 1);
  ASSERT_EQ(report->pv.size(), 1u);
  EXPECT_TRUE((*game)->Play(report->move).ok());
}

// Plays one game between two levels through the registry; returns the winner (-1 for a draw).
int PlayOneGame(const std::string& black, const std::string& white, uint64_t seed,
                int64_t max_nodes) {
  const GameInfo* info = FindGame("gomoku");
  auto game = *CreateGame("gomoku");
  SearchCache caches[2] = {SearchCache(8), SearchCache(8)};
  // A random opening of two stones near the centre, so that games differ.
  Rng rng(seed);
  for (int i = 0; i < 2; ++i) {
    std::string move =
        absl::StrCat(std::string(1, static_cast<char>('f' + rng.Below(5))), 6 + rng.Below(5));
    if (!game->Play(move).ok()) --i;
  }
  while (!game->Status().over) {
    int side = game->SideToMove();
    const Difficulty* level = FindLevel(info->levels, side == 0 ? black : white);
    // A node budget rather than the clock, so that the result does not depend on the load.
    auto report = game->ChooseMove(
        {.level = *level, .time_ms = 60000, .max_nodes = max_nodes, .seed = seed + 17},
        &caches[side]);
    EXPECT_TRUE(report.ok());
    if (!report.ok() || !game->Play(report->move).ok()) return -1;
  }
  return game->Status().winner;
}

TEST(Gomoku, MediumBeatsGreedyClearly) {
  int medium_wins = 0;
  const int games = 10;
  for (int i = 0; i < games; ++i) {
    bool medium_black = i % 2 == 0;
    int winner = PlayOneGame(medium_black ? "medium" : "greedy", medium_black ? "greedy" : "medium",
                             /*seed=*/100 + i, /*max_nodes=*/20000);
    if (winner == (medium_black ? 0 : 1)) ++medium_wins;
  }
  EXPECT_GE(medium_wins, 8);
}

#ifdef PBRAIN_PATH
// A child process speaking the Gomocup protocol over two pipes (PbrainPipe), with answers as the
// tests compare them: an error comes back as text that no expected answer matches and that says
// what went wrong, and DEBUG lines are not hidden.
class Brain {
 public:
  explicit Brain(std::vector<std::string> argv = {PBRAIN_PATH}) {
    absl::StatusOr<std::unique_ptr<PbrainPipe>> started =
        PbrainPipe::Start(argv, {.skip_debug = false, .exit_grace = std::chrono::milliseconds(0)});
    EXPECT_TRUE(started.ok()) << started.status();
    if (started.ok()) pipe_ = *std::move(started);
  }
  void Send(const std::string& line) {
    ASSERT_NE(pipe_, nullptr);
    absl::Status sent = pipe_->Send(line);
    ASSERT_TRUE(sent.ok()) << sent;
  }
  // The next line that is not a MESSAGE, or "(no answer: WHY)" after `timeout_ms`. MESSAGE lines
  // are kept in messages().
  const std::vector<std::string>& messages() const { return messages_; }
  std::string Answer(int timeout_ms = 5000) {
    if (pipe_ == nullptr) return "(no answer: not started)";
    absl::StatusOr<std::string> line =
        pipe_->Answer(std::chrono::milliseconds(timeout_ms),
                      [this](const std::string& message) { messages_.push_back(message); });
    return line.ok() ? *line : absl::StrCat("(no answer: ", line.status().message(), ")");
  }
  // Waits for the process to exit; its exit status or -1.
  int Wait() {
    if (pipe_ == nullptr) return -1;
    absl::StatusOr<int> status = pipe_->Wait(std::chrono::seconds(2));
    return status.ok() ? *status : -1;
  }

 private:
  std::unique_ptr<PbrainPipe> pipe_;
  std::vector<std::string> messages_;
};

bool IsCell(const std::string& s, int size) {
  int x = -1, y = -1;
  return sscanf(s.c_str(), "%d,%d", &x, &y) == 2 && x >= 0 && y >= 0 && x < size && y < size;
}

TEST(Pbrain, PlaysAGameOverThePipe) {
  Brain brain;
  brain.Send("START 15");
  EXPECT_EQ(brain.Answer(), "OK");
  brain.Send("INFO timeout_turn 200");
  brain.Send("INFO timeout_match 100000");
  brain.Send("INFO time_left 100000");
  brain.Send("BEGIN");
  std::string first = brain.Answer();
  EXPECT_EQ(first, "7,7");
  brain.Send("TURN 8,8");
  std::string second = brain.Answer();
  EXPECT_TRUE(IsCell(second, 15)) << second;
  EXPECT_NE(second, "7,7");
  EXPECT_NE(second, "8,8");
  brain.Send("TAKEBACK " + second);
  EXPECT_EQ(brain.Answer(), "OK");
  brain.Send("TURN 99,1");
  EXPECT_EQ(brain.Answer().rfind("ERROR", 0), 0u);
  brain.Send("ABOUT");
  EXPECT_NE(brain.Answer().find("name=\"pbrain-ply\""), std::string::npos);
  brain.Send("END");
  EXPECT_EQ(brain.Wait(), 0);
}

TEST(Pbrain, AnswersABoardByCompletingFive) {
  Brain brain;
  brain.Send("START 20");
  EXPECT_EQ(brain.Answer(), "OK");
  brain.Send("INFO timeout_turn 300");
  brain.Send("INFO rule 1");
  brain.Send("BOARD");
  // Own stones at (3..6, 10) in a row; the opponent's scattered.
  for (const char* line :
       {"3,10,1", "0,0,2", "4,10,1", "0,2,2", "5,10,1", "0,4,2", "6,10,1", "0,6,2"}) {
    brain.Send(line);
  }
  brain.Send("DONE");
  std::string move = brain.Answer();
  EXPECT_TRUE(move == "2,10" || move == "7,10") << move;
  brain.Send("RESTART");
  EXPECT_EQ(brain.Answer(), "OK");
  brain.Send("BOARD");
  brain.Send("9,9,2");
  brain.Send("DONE");
  std::string reply = brain.Answer();
  EXPECT_TRUE(IsCell(reply, 20)) << reply;
  EXPECT_NE(reply, "9,9");
  brain.Send("END");
  EXPECT_EQ(brain.Wait(), 0);
}

TEST(Pbrain, SearchesForMostOfItsTurnTime) {
  // An open middle game: no forced result, so the search runs on the clock. It keeps starting
  // iterations until 60% of the turn (less a margin) is spent, and says so.
  Brain brain({PBRAIN_PATH, "--seed", "5"});
  brain.Send("START 15");
  EXPECT_EQ(brain.Answer(), "OK");
  brain.Send("INFO timeout_turn 500");
  brain.Send("BOARD");
  for (const char* line : {"7,7,2", "8,8,1", "8,6,2", "6,8,1", "9,7,2", "7,9,1"}) brain.Send(line);
  brain.Send("DONE");
  std::string move = brain.Answer();
  EXPECT_TRUE(IsCell(move, 15)) << move;
  ASSERT_FALSE(brain.messages().empty());
  const std::string& last = brain.messages().back();
  int depth = 0, spent = 0, budget = 0;
  char cell[8] = {};
  ASSERT_EQ(sscanf(last.c_str(), "MESSAGE played %7s depth %d after %d of %d ms", cell, &depth,
                   &spent, &budget),
            4)
      << last;
  EXPECT_GE(budget, 440);
  EXPECT_LE(budget, 500);
  EXPECT_GE(spent, budget * 6 / 10) << last;
  EXPECT_GE(depth, 2);
  // Every iteration is reported with its depth.
  EXPECT_EQ(brain.messages().front().rfind("MESSAGE depth 1 ", 0), 0u) << brain.messages().front();
  brain.Send("END");
  EXPECT_EQ(brain.Wait(), 0);
}

TEST(Pbrain, PlaysALongWinByFoursAtOnce) {
  // SevenFoursPosition as a BOARD, our stones (Black) first: eight fours in a row win, a line
  // longer than the search's own probes reach. At full strength the root solver plays it.
  Brain brain({PBRAIN_PATH, "--seed", "1"});
  brain.Send("START 15");
  EXPECT_EQ(brain.Answer(), "OK");
  brain.Send("INFO timeout_turn 300");
  brain.Send("BOARD");
  for (const char* line :
       {"7,7,1", "5,7,2",  "7,6,1",  "6,7,2",  "9,5,1", "8,8,2",  "6,8,1", "8,6,2",
        "8,5,1", "7,5,2",  "9,7,1",  "9,10,2", "8,9,1", "4,5,2",  "9,4,1", "9,6,2",
        "4,3,1", "10,3,2", "7,8,1",  "7,9,2",  "4,8,1", "4,1,2",  "5,8,1", "3,8,2",
        "2,9,1", "5,11,2", "6,10,1", "5,9,2",  "6,5,1", "5,4,2",  "2,7,1", "2,10,2",
        "6,3,1", "10,1,2", "8,1,1",  "5,3,2",  "6,4,1", "5,5,2",  "5,6,1", "6,1,2",
        "5,1,1", "6,6,2",  "0,5,1",  "3,3,2",  "4,7,1", "11,12,2"}) {
    brain.Send(line);
  }
  brain.Send("DONE");
  EXPECT_EQ(brain.Answer(), "8,3");  // i12
  ASSERT_FALSE(brain.messages().empty());
  EXPECT_NE(brain.messages().back().find("wins by continuous fours"), std::string::npos)
      << brain.messages().back();
  brain.Send("END");
  EXPECT_EQ(brain.Wait(), 0);
}

TEST(Pbrain, PlaysTheLevelItIsGiven) {
  // greedy answers at once, without a search (no MESSAGE lines).
  Brain greedy({PBRAIN_PATH, "--level", "greedy"});
  greedy.Send("START 15");
  EXPECT_EQ(greedy.Answer(), "OK");
  greedy.Send("BOARD");
  for (const char* line :
       {"3,3,1", "4,4,2", "4,3,1", "5,5,2", "5,3,1", "6,6,2", "6,3,1", "9,9,2"}) {
    greedy.Send(line);
  }
  greedy.Send("DONE");
  std::string five = greedy.Answer();
  EXPECT_TRUE(five == "2,3" || five == "7,3") << five;
  EXPECT_TRUE(greedy.messages().empty());
  greedy.Send("END");
  EXPECT_EQ(greedy.Wait(), 0);
  // An unknown level is refused before any game.
  Brain unknown({PBRAIN_PATH, "--level", "grandmaster"});
  EXPECT_EQ(unknown.Wait(), 2);
}

// pbrain-ply --level L and the lobby's bot of level L (the registry, as ply-bot runs it: a fresh
// 16 MiB table, the request's seed) choose the same move from the same position and budget, at
// every level: the same time use, the same root threat checks, the same random choices. The
// budget is the one pbrain-ply reports it had (its level's time less its protocol margin), and a
// node budget both share, small enough that it binds long before the clock (a search that took
// over a third of its budget may have felt the clock, and is not compared; a few such are
// allowed on a loaded machine). pbrain-ply seeds a position's search with Mix64(--seed ^ its
// hash). 25,000 nodes stop hard mid-iteration where its partial iteration counts: the
// comparison fails if the registry does not spend time as pbrain-ply does (Gomoku::SetTimeUse).
TEST(Pbrain, ChoosesTheLobbysMoveAtEveryLevel) {
  constexpr uint64_t kSeed = 11;
  constexpr int64_t kNodes = 25000;
  // Positions from random games among the search's candidates (threats abound), and one where
  // Black wins by seven fours (hard plays it from the root check, the others need not).
  std::vector<std::vector<Gomoku::Move>> positions;
  Rng rng(5);
  for (int game = 0; game < 4; ++game) {
    Gomoku g = Make();
    std::vector<Gomoku::Move> history;
    for (int ply = 0; ply < 26 && g.GetOutcome() == Outcome::kOngoing; ++ply) {
      if (ply >= 4 && ply % 3 == game % 3) positions.push_back(history);
      MoveList<Gomoku::Move, Gomoku::kMaxMoves> moves;
      g.GenerateSearchMoves(moves);
      const Gomoku::Move m = moves[static_cast<int>(rng.Below(moves.size()))];
      Gomoku::UndoInfo undo;
      g.Make(m, undo);
      history.push_back(m);
    }
  }
  {
    Gomoku g = Make();
    std::vector<Gomoku::Move> history;
    for (const std::string& text : SevenFoursMoves()) {
      history.push_back(*g.ParseMove(text));
      Gomoku::UndoInfo undo;
      g.Make(history.back(), undo);
    }
    positions.push_back(history);
  }
  ASSERT_GE(positions.size(), 12u);

  const GameInfo* info = FindGame("gomoku");
  ASSERT_NE(info, nullptr);
  int compared = 0, clock_bound = 0, differing_moves = 0;
  for (const Difficulty& level : info->levels) {
    SCOPED_TRACE(level.name);
    Brain brain({PBRAIN_PATH, "--level", level.name, "--seed", std::to_string(kSeed), "--nodes",
                 std::to_string(kNodes), "--tt-mb", "16"});
    brain.Send("START 15");
    ASSERT_EQ(brain.Answer(), "OK");
    brain.Send("INFO timeout_turn 60000");
    std::set<std::string> moves_seen;
    for (const std::vector<Gomoku::Move>& history : positions) {
      Gomoku g = Make();
      std::vector<std::string> texts;
      for (Gomoku::Move m : history) {
        texts.push_back(g.MoveToText(m));
        Gomoku::UndoInfo undo;
        g.Make(m, undo);
      }
      SCOPED_TRACE(absl::StrJoin(texts, " "));
      // The BOARD in the game's order: pbrain-ply replays it Black, White, Black, ... as played.
      brain.Send("BOARD");
      for (size_t i = 0; i < history.size(); ++i) {
        const bool ours = (history.size() - i) % 2 == 0;
        brain.Send(
            absl::StrCat(Gomoku::XOf(history[i]), ",", Gomoku::YOf(history[i]), ",", ours ? 1 : 2));
      }
      const size_t messages_before = brain.messages().size();
      brain.Send("DONE");
      const std::string answer = brain.Answer(20000);
      int x = -1, y = -1;
      ASSERT_EQ(sscanf(answer.c_str(), "%d,%d", &x, &y), 2) << answer;
      const std::string pbrain_move = g.MoveToText(Gomoku::CellAt(x, y));
      // The budget pbrain-ply searched on ("MESSAGE played CELL ... after T of B ms"); the greedy
      // policy reports nothing and has no use for one.
      int64_t budget_ms = 0, spent_ms = 0;
      for (size_t i = messages_before; i < brain.messages().size(); ++i) {
        const std::string& line = brain.messages()[i];
        const size_t after = line.rfind(" after ");
        const size_t of = line.rfind(" of ");
        if (line.rfind("MESSAGE played ", 0) == 0 && after != std::string::npos &&
            of != std::string::npos && after < of) {
          const absl::string_view text(line);
          ASSERT_TRUE(absl::SimpleAtoi(text.substr(after + 7, of - after - 7), &spent_ms)) << line;
          ASSERT_TRUE(absl::SimpleAtoi(absl::StripSuffix(text.substr(of + 4), " ms"), &budget_ms))
              << line;
        }
      }
      if (level.policy.empty()) {
        ASSERT_GT(budget_ms, 0) << "pbrain-ply did not say its budget";
        ASSERT_LE(budget_ms, level.time_ms);
      }

      auto lobby = ReplayGame("gomoku", {}, texts);
      ASSERT_TRUE(lobby.ok()) << lobby.status();
      auto report = (*lobby)->ChooseMove({.level = level,
                                          .time_ms = budget_ms,
                                          .max_nodes = kNodes,
                                          .seed = Mix64(kSeed ^ (*lobby)->Hash())});
      ASSERT_TRUE(report.ok()) << report.status();
      if (level.policy.empty() &&
          std::max<double>(static_cast<double>(spent_ms), report->elapsed_ms) * 3 > budget_ms) {
        ++clock_bound;
        continue;
      }
      EXPECT_EQ(pbrain_move, report->move);
      ++compared;
      moves_seen.insert(report->move);
    }
    differing_moves += static_cast<int>(moves_seen.size());
    brain.Send("END");
    EXPECT_EQ(brain.Wait(), 0);
  }
  EXPECT_EQ(compared + clock_bound, static_cast<int>(info->levels.size() * positions.size()));
  EXPECT_LE(clock_bound, compared / 8) << "the machine is too slow for the node budget";
  // The positions differ enough that the moves do: a comparison of one repeated move would
  // prove little.
  EXPECT_GE(differing_moves, static_cast<int>(info->levels.size()) * 6);
}
#endif

#ifdef PBRAIN_GREEDY_PATH
TEST(PbrainGreedy, CompletesFivesAndBlocksFours) {
  Brain brain({PBRAIN_GREEDY_PATH});
  brain.Send("START 15");
  EXPECT_EQ(brain.Answer(), "OK");
  brain.Send("BEGIN");
  EXPECT_EQ(brain.Answer(), "7,7");
  // Its own four (x = 7..10 on row 3 would need 11,3 or 6,3) against a four of the opponent:
  // the five comes first.
  brain.Send("BOARD");
  for (const char* line :
       {"7,3,1", "2,9,2", "8,3,1", "3,9,2", "9,3,1", "4,9,2", "10,3,1", "5,9,2"}) {
    brain.Send(line);
  }
  brain.Send("DONE");
  std::string five = brain.Answer();
  EXPECT_TRUE(five == "6,3" || five == "11,3") << five;
  // Without a four of its own it blocks the opponent's.
  brain.Send("BOARD");
  for (const char* line : {"7,3,1", "2,9,2", "8,4,1", "3,9,2", "12,12,1", "4,9,2", "5,9,2"}) {
    brain.Send(line);
  }
  brain.Send("DONE");
  std::string block = brain.Answer();
  EXPECT_TRUE(block == "1,9" || block == "6,9") << block;
  brain.Send("END");
  EXPECT_EQ(brain.Wait(), 0);
}
#endif

#if defined(PBRAIN_MATCH_PATH) && defined(PBRAIN_GREEDY_PATH) && defined(PBRAIN_PATH)
// Runs pbrain-match with `args` and returns what it printed.
std::string RunMatch(const std::string& args) {
  std::string command = std::string(PBRAIN_MATCH_PATH) + " " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char chunk[4096];
  while (size_t n = fread(chunk, 1, sizeof(chunk), pipe)) out.append(chunk, n);
  pclose(pipe);
  return out;
}

TEST(PbrainMatch, PlaysBothColoursAndPrintsTheScoreWithAnInterval) {
  std::string out = RunMatch(absl::StrCat("--games 2 --turn_ms 50 --seed 3 '", PBRAIN_PATH,
                                          " --level greedy' '", PBRAIN_GREEDY_PATH, "'"));
  EXPECT_NE(out.find("game   1: A Black, "), std::string::npos) << out;
  EXPECT_NE(out.find("game   2: A White, "), std::string::npos) << out;
  EXPECT_NE(out.find("2 games at 50 ms a move, freestyle 15x15: A +"), std::string::npos) << out;
  EXPECT_NE(out.find("(95%: "), std::string::npos) << out;
}

TEST(PbrainMatch, OpensWithSharedRandomStonesNearTheCentre) {
  // Six games of two greedy players: three openings of four stones, each played with both
  // colours, every stone within three cells of the centre (h8), and the openings told apart.
  std::string out = RunMatch(absl::StrCat("--games 6 --turn_ms 20 --seed 5 --show '",
                                          PBRAIN_GREEDY_PATH, "' '", PBRAIN_GREEDY_PATH, "'"));
  std::vector<std::vector<std::string>> openings;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (!absl::StartsWith(line, "  ")) continue;
    std::vector<std::string> moves = absl::StrSplit(absl::StripLeadingAsciiWhitespace(line), ' ');
    ASSERT_GE(moves.size(), 5u) << line;
    moves.resize(4);
    for (const std::string& m : moves) {
      const int x = m[0] - 'a', y = std::stoi(m.substr(1)) - 1;
      EXPECT_LE(std::abs(x - 7), 3) << m;
      EXPECT_LE(std::abs(y - 7), 3) << m;
    }
    openings.push_back(moves);
  }
  ASSERT_EQ(openings.size(), 6u) << out;
  for (int pair = 0; pair < 3; ++pair) EXPECT_EQ(openings[2 * pair], openings[2 * pair + 1]);
  EXPECT_NE(openings[0], openings[2]);
  EXPECT_NE(openings[2], openings[4]);
  EXPECT_NE(out.find("openings: 3 distinct (up to symmetry) of 3, 4 stones each"),
            std::string::npos)
      << out;
  // Two stones as before: only some 30 openings exist up to symmetry, and 120 games show it.
  out = RunMatch(absl::StrCat("--games 240 --turn_ms 1 --seed 53 --opening_stones 2 '",
                              PBRAIN_GREEDY_PATH, "' '", PBRAIN_GREEDY_PATH, "'"));
  const size_t at = out.find("openings: ");
  ASSERT_NE(at, std::string::npos) << out;
  int distinct = 0;
  ASSERT_EQ(std::sscanf(out.c_str() + at, "openings: %d distinct (up to symmetry) of 120, 2 stones",
                        &distinct),
            1)
      << out;
  EXPECT_GE(distinct, 10) << out;
  EXPECT_LE(distinct, 40) << out;
}

TEST(PbrainMatch, AnIllegalAnswerLosesTheGame) {
  // An engine that answers every move with a cell off the board.
  const std::string script = ::testing::TempDir() + "/broken_brain.sh";
  FILE* f = fopen(script.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(
      "while read l; do case \"$l\" in START*) echo OK;; BOARD*|TURN*|BEGIN*) echo 99,99;; "
      "esac; done\n",
      f);
  fclose(f);
  std::string out =
      RunMatch(absl::StrCat("--games 2 --turn_ms 50 '", PBRAIN_GREEDY_PATH, "' 'sh ", script, "'"));
  EXPECT_NE(out.find("illegal answer '99,99'"), std::string::npos) << out;
  EXPECT_NE(out.find("A +2 =0 -0, score 100.0%"), std::string::npos) << out;
}
#endif

}  // namespace
}  // namespace ply
