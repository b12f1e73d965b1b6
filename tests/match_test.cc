// Engine-vs-engine matches: the Elo arithmetic, and that difficulty levels are ordered.
#include "engine/tool/match.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ply {
namespace {

TEST(Elo, IsZeroForAnEvenScoreAndSymmetric) {
  EXPECT_NEAR(EloFromScore(0.5), 0, 1e-9);
  EXPECT_NEAR(EloFromScore(0.75), -EloFromScore(0.25), 1e-9);
  // 0.64 is the classic +100 Elo score.
  EXPECT_NEAR(EloFromScore(0.64), 100, 1.0);
}

TEST(Elo, ErrorBarShrinksWithMoreGames) {
  MatchResult few{.wins = 6, .draws = 2, .losses = 2};
  MatchResult many{.wins = 60, .draws = 20, .losses = 20};
  EXPECT_NEAR(few.Score(), many.Score(), 1e-12);
  EXPECT_GT(few.EloErrorBar(), many.EloErrorBar());
}

TEST(Elo, ASweepGivesAOneSidedBound) {
  MatchResult sweep{.wins = 20};
  EXPECT_EQ(sweep.EloText(), "> +317 (95%)");
  MatchResult lost{.losses = 20};
  EXPECT_EQ(lost.EloText(), "< -317 (95%)");
  MatchResult mixed{.wins = 12, .draws = 2, .losses = 6};
  EXPECT_EQ(mixed.EloText().substr(0, 4), "+108");
}

TEST(Match, AlternatesColoursAndCountsEveryGame) {
  auto r = RunMatch({.game = "tictactoe", .level_a = "hard", .level_b = "hard", .games = 4});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->games(), 4);
  ASSERT_EQ(r->records.size(), 4u);
  EXPECT_EQ(r->records[0].a_player, 0);
  EXPECT_EQ(r->records[1].a_player, 1);
  // Perfect play from any two-ply opening of tic-tac-toe... is not always a draw, but the same
  // opening with colours swapped gives both sides the same chances.
  EXPECT_EQ(r->records[0].moves[0], r->records[1].moves[0]);
}

TEST(Match, RejectsUnknownLevelsAndGames) {
  EXPECT_EQ(RunMatch({.game = "connect4", .level_a = "godlike", .level_b = "easy"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunMatch({.game = "chess", .level_a = "hard", .level_b = "easy"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Match, HardScoresClearlyAboveEasyInConnectFour) {
  // Node budgets instead of clocks keep this quick and independent of the machine's speed.
  auto r = RunMatch({.game = "connect4",
                     .level_a = "hard",
                     .level_b = "easy",
                     .games = 12,
                     .seed = 5,
                     .max_nodes = 20000,
                     .tt_megabytes = 4});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GE(r->Score(), 0.75) << "+" << r->wins << " =" << r->draws << " -" << r->losses;
}

}  // namespace
}  // namespace ply
