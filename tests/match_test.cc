// Engine-vs-engine matches: the Elo arithmetic, and that difficulty levels are ordered.
#include "engine/tool/match.h"

#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_format.h"
#include "engine/tool/ladder.h"

namespace ply {
namespace {

TEST(Elo, IsZeroForAnEvenScoreAndSymmetric) {
  EXPECT_NEAR(EloFromScore(0.5), 0, 1e-9);
  EXPECT_NEAR(EloFromScore(0.75), -EloFromScore(0.25), 1e-9);
  // 0.64 is the classic +100 Elo score.
  EXPECT_NEAR(EloFromScore(0.64), 100, 1.0);
}

TEST(Elo, IntervalShrinksWithMoreGamesAndMatchesTheLine) {
  const EloRange few = EloEstimate(6, 2, 2), many = EloEstimate(60, 20, 20);
  ASSERT_TRUE(few.estimate && few.low && few.high && many.estimate && many.low && many.high);
  EXPECT_EQ(*few.estimate, *many.estimate);
  EXPECT_GT(*few.high - *few.low, *many.high - *many.low);
  EXPECT_LT(*many.low, *many.estimate);
  EXPECT_GT(*many.high, *many.estimate);
  // The numbers are the line's.
  EXPECT_EQ(EloSummary(60, 20, 20), absl::StrFormat("Elo %+.0f (95%%: %+.0f .. %+.0f)",
                                                    *many.estimate, *many.low, *many.high));
  // A sweep: no estimate, one bound, as worded.
  const EloRange sweep = EloEstimate(20, 0, 0);
  EXPECT_FALSE(sweep.estimate);
  EXPECT_FALSE(sweep.high);
  ASSERT_TRUE(sweep.low);
  EXPECT_EQ(*sweep.low, 317);
  const EloRange lost = EloEstimate(0, 0, 20);
  EXPECT_FALSE(lost.estimate || lost.low);
  ASSERT_TRUE(lost.high);
  EXPECT_EQ(*lost.high, -317);
  EXPECT_FALSE(EloEstimate(0, 0, 0).estimate);
}

TEST(Elo, MatchTextIsTheSummarysForSweepsSmallMatchesAndOrdinaryOnes) {
  // ply-engine match prints EloText, pbrain-match EloSummary: one formatting of every case.
  MatchResult sweep{.wins = 20};
  EXPECT_EQ(sweep.EloText(), "Elo: no estimate, all 20 games won (95%: at least +317)");
  MatchResult lost{.losses = 20};
  EXPECT_EQ(lost.EloText(), "Elo: no estimate, all 20 games lost (95%: at most -317)");
  MatchResult mixed{.wins = 12, .draws = 2, .losses = 6};
  EXPECT_EQ(mixed.EloText(), "Elo +108 (95%: -33 .. +298)");
  // A one-game match once printed "+- inf"; Wilson at 0.5 and one game: 0.0546 .. 0.9454.
  MatchResult one{.draws = 1};
  EXPECT_EQ(one.EloText(), "Elo +0, the one game drawn (95%: -495 .. +495, Wilson's interval)");
  MatchResult none;
  EXPECT_EQ(none.EloText(), "Elo: no estimate, no games played");
  for (int w = 0; w <= 3; ++w) {
    for (int d = 0; d <= 3; ++d) {
      for (int l = 0; l <= 3; ++l) {
        EXPECT_EQ((MatchResult{.wins = w, .draws = d, .losses = l}.EloText()), EloSummary(w, d, l));
      }
    }
  }
}

TEST(EloSummary, AnOrdinaryMatchGivesTheEstimateAndItsNormalInterval) {
  // 13/20: +108; the normal interval 0.65 +- 1.96 * sqrt(0.2025 / 20) is 0.453 .. 0.847.
  EXPECT_EQ(EloSummary(12, 2, 6), "Elo +108 (95%: -33 .. +298)");
  // An even score is +0, not -0.
  EXPECT_EQ(EloSummary(10, 0, 10).substr(0, 7), "Elo +0 ");
  // 499.5 points of 1000 is -0.35 Elo: it prints +0, not -0.
  EXPECT_EQ(EloSummary(499, 1, 500).substr(0, 7), "Elo +0 ");
}

TEST(EloSummary, ASweepGivesNoEstimateButTheExactOneSidedBound) {
  // 0.05^(1/2) = 0.224 of the score: not even evidence that A is the stronger.
  EXPECT_EQ(EloSummary(2, 0, 0), "Elo: no estimate, all 2 games won (95%: at least -216)");
  EXPECT_EQ(EloSummary(0, 0, 2), "Elo: no estimate, all 2 games lost (95%: at most +216)");
  EXPECT_EQ(EloSummary(1, 0, 0), "Elo: no estimate, the one game won (95%: at least -512)");
  EXPECT_EQ(EloSummary(20, 0, 0), "Elo: no estimate, all 20 games won (95%: at least +317)");
}

TEST(EloSummary, NoGamesOrOnlyDrawsOrTooFewSayWhatTheyCan) {
  EXPECT_EQ(EloSummary(0, 0, 0), "Elo: no estimate, no games played");
  // Wilson at 0.5 and 4 games: 0.1500 .. 0.8500 of the score.
  EXPECT_EQ(EloSummary(0, 4, 0),
            "Elo +0, all 4 games drawn (95%: -301 .. +301, Wilson's interval)");
  // 1-1: the normal interval 0.5 +- 0.69 leaves (0, 1); Wilson's is 0.0945 .. 0.9055.
  EXPECT_EQ(EloSummary(1, 0, 1),
            "Elo +0 (95%: -393 .. +393, Wilson's interval: too few games for the normal one)");
}

TEST(EloSummary, NeverPrintsInfinitiesForAnySmallMatch) {
  for (int w = 0; w <= 6; ++w) {
    for (int d = 0; d <= 6; ++d) {
      for (int l = 0; l <= 6; ++l) {
        const std::string text = EloSummary(w, d, l);
        EXPECT_EQ(text.find("inf"), std::string::npos) << w << " " << d << " " << l << ": " << text;
        EXPECT_EQ(text.find("nan"), std::string::npos) << w << " " << d << " " << l << ": " << text;
      }
    }
  }
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

TEST(Ladder, FitsEloDifferencesFromScoresAroundTheAnchor) {
  // B holds 1000; A scores 75% against B: about 190 points above (with the fit's prior of one
  // draw a pairing, 75.5 of 101).
  std::vector<LadderRating> two =
      FitRatings({"b", "a"}, {{.a = 1, .b = 0, .wins = 75, .draws = 0, .losses = 25}},
                 /*anchor=*/0, /*anchor_rating=*/1000);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].rating, 1000);
  EXPECT_EQ(two[0].error, 0);
  EXPECT_NEAR(two[1].rating, 1000 + EloFromScore(75.5 / 101), 1.0);
  EXPECT_GT(two[1].error, 0);
  EXPECT_EQ(two[1].games, 100);
  // A chain: C at 0, B 75% over C, A 75% over B: the differences add up.
  std::vector<LadderRating> chain =
      FitRatings({"c", "b", "a"},
                 {{.a = 1, .b = 0, .wins = 300, .draws = 0, .losses = 100},
                  {.a = 2, .b = 1, .wins = 300, .draws = 0, .losses = 100}},
                 0, 0);
  EXPECT_NEAR(chain[1].rating, EloFromScore(0.75), 2.0);
  EXPECT_NEAR(chain[2].rating, 2 * EloFromScore(0.75), 4.0);
  // A clean sweep stays finite, and more games narrow the interval.
  std::vector<LadderRating> sweep = FitRatings({"b", "a"}, {{.a = 1, .b = 0, .wins = 10}}, 0, 0);
  EXPECT_TRUE(std::isfinite(sweep[1].rating));
  EXPECT_GT(sweep[1].rating, 300);
  std::vector<LadderRating> more =
      FitRatings({"b", "a"}, {{.a = 1, .b = 0, .wins = 750, .losses = 250}}, 0, 0);
  EXPECT_LT(more[1].error, two[1].error);
}

TEST(Ladder, PutsTheLevelsOfTicTacToeAboveTheRandomMover) {
  absl::StatusOr<std::vector<LadderRating>> ladder =
      RunLadder({.game = "tictactoe", .games = 8, .seed = 5, .time_ms = 5});
  ASSERT_TRUE(ladder.ok()) << ladder.status();
  ASSERT_GE(ladder->size(), 6u);
  EXPECT_EQ((*ladder)[0].name, "random");
  EXPECT_EQ((*ladder)[0].rating, kRandomAnchor);
  // The searching levels beat a random mover clearly.
  for (size_t i = 3; i < ladder->size(); ++i) {
    EXPECT_GT((*ladder)[i].rating, kRandomAnchor + 100) << (*ladder)[i].name;
  }
}

}  // namespace
}  // namespace ply
