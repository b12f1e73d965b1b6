#include "engine/games/connect4/connect4.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/search/perft.h"
#include "engine/search/search.h"
#include "tests/conformance.h"
#include "tests/data/test_data.h"

namespace ply {
namespace {

Connect4 Make(const GameOptions& options = {}) { return *Connect4::Create(options); }

void PlayColumns(Connect4& g, std::string_view digits) {
  for (char d : digits) {
    auto m = g.ParseMove(std::string(1, d));
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_EQ(g.GetOutcome(), Outcome::kOngoing);
    Connect4::UndoInfo u;
    g.Make(*m, u);
  }
}

TEST(Connect4, PerftMatchesKnownCountsOnSevenBySix) {
  const uint64_t expected[] = {7, 49, 343, 2401, 16807, 117649, 823536, 5673234};
  Connect4 g = Make();
  for (int d = 1; d <= 8; ++d) EXPECT_EQ(Perft(g, d), expected[d - 1]) << "depth " << d;
}

TEST(Connect4, PassesConformanceOnEveryVariant) {
  testing::RunConformance(Make(), 200, 1);
  testing::RunConformance(Make({{"width", "6"}, {"height", "5"}}), 100, 2);
  testing::RunConformance(Make({{"cylinder", "true"}}), 200, 3);
  testing::RunConformance(Make({{"width", "4"}, {"height", "4"}, {"cylinder", "true"}}), 100, 4);
  testing::RunConformance(Make({{"width", "8"}, {"height", "7"}}), 100, 5);
  testing::RunConformance(Make({{"width", "12"}, {"height", "4"}, {"cylinder", "1"}}), 100, 6);
}

TEST(Connect4, RejectsBoardsThatDoNotFit) {
  EXPECT_FALSE(Connect4::Create({{"width", "9"}, {"height", "7"}}).ok());
  EXPECT_FALSE(Connect4::Create({{"width", "3"}}).ok());
  EXPECT_FALSE(Connect4::Create({{"width", "seven"}}).ok());
  EXPECT_FALSE(Connect4::Create({{"cylinder", "maybe"}}).ok());
}

TEST(Connect4, ParsesColumnsAndRejectsFullOrMissingOnes) {
  Connect4 g = Make();
  PlayColumns(g, "444444");
  EXPECT_EQ(g.ParseMove("4").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("8").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.ParseMove("0").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.ParseMove("x").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*g.ParseMove(" 7 "), 6);
}

TEST(Connect4, DetectsFourInEveryDirection) {
  struct Case {
    const char* moves;
    bool won;
  };
  const Case cases[] = {
      {"121212", false},         {"1212121", true},          // vertical
      {"112233", false},         {"1122334", true},          // horizontal
      {"52466324147342", false}, {"524663241473423", true},  // diagonal up to the right
      {"34616513544237", false}, {"346165135442373", true},  // diagonal down to the right
  };
  for (const Case& c : cases) {
    Connect4 g = Make();
    PlayColumns(g, c.moves);
    EXPECT_EQ(g.GetOutcome() == Outcome::kLoss, c.won) << c.moves;
  }
}

TEST(Connect4, LinesWrapOnlyOnTheCylinder) {
  // X plays 6, 7, 1, 2 on the bottom row; O stacks on 4 and 3.
  for (bool cylinder : {false, true}) {
    Connect4 g = Make({{"cylinder", cylinder ? "true" : "false"}});
    PlayColumns(g, "647413");
    EXPECT_EQ(g.GetOutcome(), Outcome::kOngoing);
    Connect4::UndoInfo u;
    g.Make(*g.ParseMove("2"), u);
    EXPECT_EQ(g.GetOutcome() == Outcome::kLoss, cylinder);
  }
  // A diagonal across the edge: X at (7,1), (1,2), (2,3), (3,4).
  Connect4 c = Make({{"cylinder", "true"}});
  PlayColumns(c, "7112232533");
  EXPECT_EQ(c.GetOutcome(), Outcome::kOngoing) << c.Render();
  Connect4::UndoInfo u;
  c.Make(*c.ParseMove("3"), u);
  EXPECT_EQ(c.GetOutcome(), Outcome::kLoss) << c.Render();
}

TEST(Connect4, WinningCellsAreThreats) {
  Connect4 g = Make();
  PlayColumns(g, "1122");  // X on 1 and 2 bottom, O above: X threatens nothing yet
  EXPECT_EQ(g.WinningCells(0), 0u);
  PlayColumns(g, "3");  // X bottom 1, 2, 3: threatens bottom of 4
  EXPECT_EQ(g.WinningCells(0), uint64_t{1} << (3 * 7));
}

TEST(Connect4, EvaluationIsMirrorSymmetric) {
  Connect4 a = Make(), b = Make();
  PlayColumns(a, "3342156");
  PlayColumns(b, "5546732");  // the same moves mirrored: column c -> 8 - c
  EXPECT_EQ(a.Evaluate(), b.Evaluate());
  // On the empty board only the move in hand counts.
  EXPECT_EQ(Make().Evaluate(), Connect4::kTempo);
}

// Converts a score in the solver test sets' convention to the search's mate scores.
Score ToSearchScore(int solver_score, int moves_played) {
  if (solver_score == 0) return 0;
  if (solver_score > 0) {
    int stone = 22 - solver_score;  // the winner's winning stone
    return WinIn(2 * (stone - moves_played / 2) - 1);
  }
  int stone = 22 + solver_score;
  return LossIn(2 * (stone - (moves_played + 1) / 2));
}

// The first 300 end-game positions of tests/data/connect4/end-easy.txt, valued by the exact
// solver (a missing set fails).
TEST(Connect4, SearchProvesEndGamePositionsWithExactDistances) {
  std::vector<test_data::Connect4Position> positions;
  ASSERT_NO_FATAL_FAILURE(
      test_data::LoadConnect4Set("end-easy", /*stride=*/1, /*limit=*/300, positions));
  auto searcher = std::make_unique<Searcher<Connect4>>(16);
  int checked = 0;
  for (const auto& [moves, score] : positions) {
    Connect4 g = Make();
    PlayColumns(g, moves);
    auto r = searcher->Search(g, {});
    ASSERT_TRUE(r.exact) << moves;
    ASSERT_EQ(r.score, ToSearchScore(score, static_cast<int>(moves.size())))
        << moves << " expected " << score;
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

TEST(Connect4, SearchPlaysTheWinningMoveAndBlocksTheLosingOne) {
  auto searcher = std::make_unique<Searcher<Connect4>>(1);
  Connect4 g = Make();
  PlayColumns(g, "445566");  // X threatens to make four on the bottom row at 3 or 7
  auto r = searcher->Search(g, {.max_depth = 8});
  EXPECT_TRUE(r.best_move == 2 || r.best_move == 6);
  EXPECT_EQ(r.score, WinIn(1));
  Connect4 h = Make();
  PlayColumns(h, "445");  // X threatens an open three next move: O must block at 3 or 6
  auto r2 = searcher->Search(h, {.max_depth = 8});
  EXPECT_TRUE(r2.best_move == 2 || r2.best_move == 5) << int(r2.best_move);
  EXPECT_FALSE(IsMateScore(r2.score)) << r2.score;
}

}  // namespace
}  // namespace ply
