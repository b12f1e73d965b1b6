#include "engine/games/morris/morris.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "engine/core/random.h"
#include "engine/search/perft.h"
#include "engine/search/search.h"
#include "tests/conformance.h"
#include "tests/play_moves.h"

namespace ply {
namespace {

Morris Position(std::string_view white, std::string_view black, int white_in_hand,
                int black_in_hand, Player to_move, const GameOptions& options = {}) {
  absl::StatusOr<Morris> g =
      Morris::FromPosition(white, black, white_in_hand, black_in_hand, to_move, options);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

using testing_util::PlayMoves;

std::set<std::string> MoveTexts(const Morris& g) {
  MoveListOf<Morris> moves;
  g.GenerateMoves(moves);
  std::set<std::string> out;
  for (Morris::Move m : moves) out.insert(g.MoveToText(m));
  return out;
}

Difficulty Hard() { return *FindLevel(Morris::Levels(), "hard"); }

SearchLimits HardLimits() {
  Difficulty hard = Hard();
  return {.max_depth = hard.max_depth, .time_ms = hard.time_ms};
}

TEST(Morris, PerftMatchesKnownCounts) {
  // No mill can close in the first four plies; at ply five some placements take one of two.
  const uint64_t expected[] = {24, 552, 12144, 255024, 5140800};
  Morris g = *Morris::Create({});
  for (int d = 1; d <= 5; ++d) EXPECT_EQ(Perft(g, d), expected[d - 1]) << "depth " << d;
}

TEST(Morris, PerftMatchesAnIndependentGeneratorInEveryPhase) {
  // Counts from a separate, plainly written Python move generator.
  struct Case {
    const char* white;
    const char* black;
    int white_in_hand, black_in_hand;
    Player to_move;
    int depth;
    uint64_t nodes;
  };
  const Case cases[] = {
      {"a1 d2 g7 f4", "d1 b4 c5 e3", 0, 0, 0, 4, 6166},
      {"a1 d2 g7", "d1 b4 c5 e3 f6", 0, 0, 1, 4, 277836},
      {"a1 d1 g4 b6", "a7 d7 c5 e3", 0, 0, 0, 4, 60682},
      {"a1 d1 b2 d2", "g7 d7 f6 d6", 5, 5, 0, 3, 11376},
      {"a1 d1 b2 d2 f2", "g7 d7 f6 d6", 1, 2, 1, 4, 37601},
      {"b2 f2 d3 a4 g7", "d1 c5 e4 b6 a7", 0, 0, 0, 4, 13388},
      {"a1 d1 g1 a4", "g7 d7 a7 d6", 0, 0, 1, 4, 608},
      {"a1 d2 g7", "c5 e3 b6", 0, 0, 0, 4, 8555968},
  };
  for (const Case& c : cases) {
    Morris g = Position(c.white, c.black, c.white_in_hand, c.black_in_hand, c.to_move);
    EXPECT_EQ(Perft(g, c.depth), c.nodes) << c.white << " / " << c.black;
  }
}

TEST(Morris, PassesConformance) {
  testing::RunConformance(*Morris::Create({}), 150, 1);
  testing::RunConformance(*Morris::Create({{"flying", "false"}}), 100, 2);
}

TEST(Morris, PassesConformanceFromAnEndgame) {
  // Both sides fly at once, so mills, removals and the end by two pieces come quickly.
  testing::RunConformance(Position("a1 d2 g7", "c5 e3 b6", 0, 0, 0), 200, 3);
  testing::RunConformance(Position("a1 d2 g7 f4 b4", "c5 e3 b6 d6", 0, 0, 1), 200, 4);
}

TEST(Morris, RejectsBadOptionsAndPositions) {
  EXPECT_FALSE(Morris::Create({{"flying", "sometimes"}}).ok());
  EXPECT_FALSE(Morris::FromPosition("a2", "", 9, 9, 0).ok());
  EXPECT_FALSE(Morris::FromPosition("a1", "a1", 8, 8, 0).ok());
  EXPECT_FALSE(Morris::FromPosition("a1", "", 9, 9, 0).ok());
  EXPECT_FALSE(Morris::FromPosition("", "", 9, 9, 1).ok());
  EXPECT_TRUE(Morris::FromPosition("a1", "", 8, 9, 1).ok());
}

TEST(Morris, PlacingMillRemovesAPieceOutsideMills) {
  // Black's b2 d2 f2 is a mill, so closing a1 d1 g1 may only take g7.
  Morris g = Position("a1 d1", "b2 d2 f2 g7", 5, 5, 0);
  std::set<std::string> moves = MoveTexts(g);
  EXPECT_TRUE(moves.count("g1xg7"));
  EXPECT_FALSE(moves.count("g1"));
  EXPECT_FALSE(moves.count("g1xd2"));
  EXPECT_EQ(moves.size(), 24u - 6u);
  EXPECT_EQ(g.ParseMove("g1").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("g1xd2").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("g1xa4").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("g4xg7").status().code(), absl::StatusCode::kFailedPrecondition);
  PlayMoves(g, {"g1xg7"});
  EXPECT_EQ(g.pieces(1), Position("", "b2 d2 f2", 5, 5, 0).pieces(1));
  EXPECT_EQ(g.in_hand(0), 4);
  EXPECT_EQ(g.quiet_plies(), 0);
}

TEST(Morris, AMillMayBeBrokenWhenEveryPieceIsInOne) {
  Morris g = Position("a1 d1", "b2 d2 f2", 6, 6, 0);
  std::set<std::string> moves = MoveTexts(g);
  EXPECT_TRUE(moves.count("g1xb2"));
  EXPECT_TRUE(moves.count("g1xd2"));
  EXPECT_TRUE(moves.count("g1xf2"));
  EXPECT_FALSE(moves.count("g1"));
}

TEST(Morris, AMillAgainstAnEmptyBoardRemovesNothing) {
  Morris g = Position("a1 d1", "", 6, 6, 0);
  EXPECT_TRUE(MoveTexts(g).count("g1"));
  EXPECT_EQ(g.ParseMove("g1xg7").status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(Morris, MovingSlidesToAdjacentEmptyPoints) {
  Morris g = Position("a1 d2 g7 f4", "d1 b4 c5 e3", 0, 0, 0);
  std::set<std::string> moves = MoveTexts(g);
  const std::set<std::string> expected = {"a1-a4", "d2-b2", "d2-f2", "d2-d3", "g7-g4",
                                          "g7-d7", "f4-f2", "f4-f6", "f4-e4", "f4-g4"};
  EXPECT_EQ(moves, expected);
  EXPECT_EQ(g.ParseMove("a1-a7").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("a1-d1").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("b4-a4").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("a4").status().code(), absl::StatusCode::kFailedPrecondition);
  PlayMoves(g, {"a1-a4", "b4-b2"});
  EXPECT_EQ(g.quiet_plies(), 2);
}

TEST(Morris, MovingIntoAMillRemovesAndUndoes) {
  Morris g = Position("a1 d1 g4 b6", "a7 d7 c5 e3", 0, 0, 0);
  const Morris before = g;
  absl::StatusOr<Morris::Move> m = g.ParseMove("g4-g1xc5");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(g.MoveToText(*m), "g4-g1xc5");
  Morris::UndoInfo u;
  g.Make(*m, u);
  EXPECT_EQ(std::popcount(g.pieces(1)), 3);
  EXPECT_EQ(g.Hash(), g.ComputeHash());
  g.Unmake(*m, u);
  EXPECT_TRUE(g == before);
}

TEST(Morris, AThreePieceSideFlies) {
  Morris g = Position("a1 d2 g7", "d1 b4 c5 e3 f6", 0, 0, 0);
  EXPECT_TRUE(g.IsFlying(0));
  EXPECT_FALSE(g.IsFlying(1));
  // 16 empty points for each of the three pieces, and no mill can close.
  EXPECT_EQ(MoveTexts(g).size(), 3u * 16u);
  EXPECT_TRUE(g.ParseMove("a1-e5").ok());

  Morris grounded = Position("a1 d2 g7", "d1 b4 c5 e3 f6", 0, 0, 0, {{"flying", "false"}});
  EXPECT_FALSE(grounded.IsFlying(0));
  EXPECT_EQ(MoveTexts(grounded),
            (std::set<std::string>{"a1-a4", "d2-b2", "d2-f2", "d2-d3", "g7-g4", "g7-d7"}));
  EXPECT_EQ(grounded.ParseMove("a1-e5").status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(Morris, ASideWithTwoPiecesLoses) {
  // Black flies with three pieces; White closes a mill and takes one.
  Morris g = Position("a1 d1 g4 b6", "a7 c5 e3", 0, 0, 0);
  PlayMoves(g, {"g4-g1xa7"});
  EXPECT_EQ(g.GetOutcome(), Outcome::kLoss);
  EXPECT_EQ(g.Status().winner, 0);
  EXPECT_STREQ(g.Status().reason, "fewer than three pieces left");
  EXPECT_EQ(g.ParseMove("c5-c4").status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(Morris, ABlockedSideLoses) {
  // Black a1 d1 g7 d7 is hemmed in except for d6, which White's d5 now fills.
  Morris g = Position("a4 g1 d2 g4 a7 d5", "a1 d1 g7 d7", 0, 0, 0);
  EXPECT_EQ(g.GetOutcome(), Outcome::kOngoing);
  PlayMoves(g, {"d5-d6"});
  EXPECT_EQ(g.GetOutcome(), Outcome::kLoss);
  EXPECT_EQ(g.Status().winner, 0);
  EXPECT_STREQ(g.Status().reason, "no legal move");
  // Three pieces fly, so they are never blocked.
  EXPECT_EQ(Position("a4 g1 d2 g4 d7", "a1 d1 g7", 0, 0, 1).GetOutcome(), Outcome::kOngoing);
  EXPECT_EQ(Position("a4 g1 d2 g4 d7", "a1 d1 g7", 0, 0, 1, {{"flying", "false"}}).GetOutcome(),
            Outcome::kLoss);
}

TEST(Morris, ThirdRepetitionIsADraw) {
  Morris g = Position("a1 c3 e5 b6", "g7 e3 c5 f2", 0, 0, 0);
  PlayMoves(g, {"a1-a4", "g7-g4", "a4-a1", "g4-g7", "a1-a4", "g7-g4", "a4-a1"});
  EXPECT_EQ(g.GetOutcome(), Outcome::kOngoing);
  PlayMoves(g, {"g4-g7"});
  EXPECT_EQ(g.GetOutcome(), Outcome::kDraw);
  EXPECT_STREQ(g.Status().reason, "threefold repetition");
  EXPECT_EQ(g.Status().winner, -1);
}

TEST(Morris, FiftyMovesEachWithoutAMillIsADraw) {
  // A random walk that never closes a mill and never repeats a position.
  Morris g = Position("a1 c3 e5 b6 g4", "g7 e3 c5 f2 d1", 0, 0, 0);
  Rng rng(7);
  std::set<uint64_t> seen = {g.Hash()};
  for (int ply = 0; ply < Morris::kQuietPlyLimit; ++ply) {
    ASSERT_EQ(g.GetOutcome(), Outcome::kOngoing) << "ply " << ply << "\n" << g.Render();
    MoveListOf<Morris> moves;
    g.GenerateMoves(moves);
    Morris::Move chosen = Morris::kNoMove;
    for (int tries = 0; tries < 64 && chosen == Morris::kNoMove; ++tries) {
      Morris::Move m = moves[static_cast<int>(rng.Below(moves.size()))];
      if (Morris::Removed(m) != Morris::kNone) continue;
      Morris next = g;
      Morris::UndoInfo u;
      next.Make(m, u);
      if (!seen.count(next.Hash()) && next.GetOutcome() == Outcome::kOngoing) chosen = m;
      if (ply == Morris::kQuietPlyLimit - 1 && !seen.count(next.Hash())) chosen = m;
    }
    ASSERT_NE(chosen, Morris::kNoMove) << "the walk got stuck at ply " << ply;
    Morris::UndoInfo u;
    g.Make(chosen, u);
    seen.insert(g.Hash());
    EXPECT_EQ(g.quiet_plies(), ply + 1);
  }
  EXPECT_EQ(g.GetOutcome(), Outcome::kDraw);
  EXPECT_STREQ(g.Status().reason, "50 moves each without a mill");
}

TEST(Morris, NotationRoundTripsAndRejectsNonsense) {
  Morris g = *Morris::Create({});
  EXPECT_EQ(g.MoveToText(*g.ParseMove("d2")), "d2");
  EXPECT_EQ(*g.ParseMove(" D2 "), *g.ParseMove("d2"));
  for (const char* bad : {"", "d", "a2", "d4", "h1", "d2-", "d2xx", "d2-d3-d4", "d2 d3", "1d"}) {
    EXPECT_EQ(g.ParseMove(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(g.ParseMove("d2-d3").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("d2xg7").status().code(), absl::StatusCode::kFailedPrecondition);
  Morris mill = Position("a1 b4 c4 g4 d2", "g7 c5 e3 f6", 0, 0, 0);
  absl::StatusOr<Morris::Move> m = mill.ParseMove("a1-a4xg7");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, Morris::MakeMove(Morris::PointIndex("a1"), Morris::PointIndex("a4"),
                                 Morris::PointIndex("g7")));
  EXPECT_EQ(mill.MoveToText(*m), "a1-a4xg7");
  EXPECT_EQ(mill.ParseMove("a1-a4").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(mill.ParseMove("a1-a4xb4").status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(Morris, RenderShowsTheDiagramWithCoordinates) {
  Morris g = *Morris::Create({});
  PlayMoves(g, {"a1", "g7", "d2"});
  const std::string board = g.Render();
  EXPECT_NE(board.find("7 .-----------.-----------B"), std::string::npos) << board;
  EXPECT_NE(board.find("1 W-----------.-----------."), std::string::npos) << board;
  EXPECT_NE(board.find("4 .---.---.       .---.---."), std::string::npos) << board;
  EXPECT_NE(board.find("  a   b   c   d   e   f   g"), std::string::npos) << board;
  EXPECT_NE(board.find("* Black (B): 1 on the board, 8 in hand"), std::string::npos) << board;
}

TEST(Morris, EvaluationIsColourBlindAndCountsMaterial) {
  // Swapping the colours and the side to move leaves the score from the mover's view unchanged.
  const char* a = "a1 c3 e5 b6 d6";
  const char* b = "g7 e3 c5 f2";
  EXPECT_EQ(Position(a, b, 0, 0, 0).Evaluate(), Position(b, a, 0, 0, 1).Evaluate());
  EXPECT_EQ(Position(a, "g7 e3 c5", 0, 0, 0).Evaluate(),
            Position("g7 e3 c5", a, 0, 0, 1).Evaluate());
  EXPECT_EQ(Morris::Create({})->Evaluate(), 0);
  EXPECT_GT(Position("a1 c3 e5 b6 d6", "g7 e3 c5 f2", 0, 0, 0).Evaluate(), 200);
  EXPECT_LT(Position("a1 c3 e5 b6 d6", "g7 e3 c5 f2", 0, 0, 1).Evaluate(), -200);
}

TEST(Morris, MillClosingMovesAreOrderedFirst) {
  Morris g = Position("a1 d1 g4 b6", "a7 d7 c5 e3", 0, 0, 0);
  MoveListOf<Morris> moves;
  g.GenerateMoves(moves);
  int best_plain = 0, worst_mill = 1 << 30;
  for (Morris::Move m : moves) {
    int s = g.MoveOrderScore(m);
    if (Morris::Removed(m) != Morris::kNone) {
      worst_mill = std::min(worst_mill, s);
    } else {
      best_plain = std::max(best_plain, s);
    }
  }
  EXPECT_GT(worst_mill, best_plain + (1 << 16));
}

TEST(Morris, HardLevelNeverMissesAWinningMillInOne) {
  // Random positions where the opponent has three pieces and a mill is there to be closed.
  auto searcher = std::make_unique<Searcher<Morris>>(4);
  Rng rng(11);
  int checked = 0;
  for (int attempt = 0; attempt < 5000 && checked < 100; ++attempt) {
    uint32_t free = (1u << 24) - 1;
    std::string lists[2];
    const int counts[2] = {4 + static_cast<int>(rng.Below(6)), 3};
    for (int p = 0; p < 2; ++p) {
      for (int n = 0; n < counts[p]; ++n) {
        int point;
        do point = static_cast<int>(rng.Below(24));
        while (!(free & (1u << point)));
        free &= ~(1u << point);
        lists[p] += std::string(Morris::PointName(point)) + " ";
      }
    }
    Morris g = Position(lists[0], lists[1], 0, 0, 0);
    if (g.GetOutcome() != Outcome::kOngoing) continue;
    MoveListOf<Morris> moves;
    g.GenerateMoves(moves);
    bool has_mill = false;
    for (Morris::Move m : moves) has_mill |= Morris::Removed(m) != Morris::kNone;
    if (!has_mill) continue;
    auto r = searcher->Search(g, HardLimits());
    ASSERT_EQ(r.score, WinIn(1)) << g.Render();
    ASSERT_NE(Morris::Removed(r.best_move), Morris::kNone);
    ++checked;
  }
  EXPECT_EQ(checked, 100);
}

TEST(Morris, HardLevelTakesAMillInOneBeforeItCanBeBlocked) {
  // d3-d2 closes b2 d2 f2 now; next turn Black's d1 would stand on d2.
  auto searcher = std::make_unique<Searcher<Morris>>(4);
  Morris g = Position("b2 f2 d3 a4 g7", "d1 c5 e4 b6 a7", 0, 0, 0);
  auto r = searcher->Search(g, HardLimits());
  EXPECT_EQ(Morris::From(r.best_move), Morris::PointIndex("d3")) << g.MoveToText(r.best_move);
  EXPECT_EQ(Morris::To(r.best_move), Morris::PointIndex("d2"));
  EXPECT_NE(Morris::Removed(r.best_move), Morris::kNone);
}

TEST(Morris, HardLevelFindsAForcedFlyingFork) {
  // White flies b6-a1 (threatening g1 and a7) or d1-b4 (threatening c4 and b2); Black can block
  // only one of the two.
  auto searcher = std::make_unique<Searcher<Morris>>(4);
  Morris g = Position("a4 d1 b6", "c3 e5 f2", 0, 0, 0);
  auto r = searcher->Search(g, HardLimits());
  EXPECT_EQ(r.score, WinIn(3)) << g.MoveToText(r.best_move);
  EXPECT_TRUE(g.MoveToText(r.best_move) == "b6-a1" || g.MoveToText(r.best_move) == "d1-b4")
      << g.MoveToText(r.best_move);
}

TEST(Morris, HardLevelBlocksTheLastMove) {
  auto searcher = std::make_unique<Searcher<Morris>>(4);
  Morris g = Position("a4 g1 d2 g4 a7 d5", "a1 d1 g7 d7", 0, 0, 0);
  auto r = searcher->Search(g, HardLimits());
  EXPECT_EQ(r.score, WinIn(1));
  EXPECT_EQ(g.MoveToText(r.best_move), "d5-d6");
}

TEST(Morris, SearchAvoidsAThirdRepetitionWhenAhead) {
  // White, a piece up, could repeat the start position for the third time with a1-a4.
  Morris g = Position("a4 c3 e5 b6 d6", "g7 e3 c5 f2", 0, 0, 1);
  PlayMoves(g, {"g7-g4", "a4-a1", "g4-g7", "a1-a4", "g7-g4", "a4-a1", "g4-g7"});
  Morris::Move repeat = *g.ParseMove("a1-a4");
  Morris after = g;
  Morris::UndoInfo u;
  after.Make(repeat, u);
  ASSERT_EQ(after.GetOutcome(), Outcome::kDraw);
  auto searcher = std::make_unique<Searcher<Morris>>(4);
  auto r = searcher->Search(g, {.max_depth = 4});
  EXPECT_NE(r.best_move, repeat);
  EXPECT_GT(r.score, 0);
}

}  // namespace
}  // namespace ply
