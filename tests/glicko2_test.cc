// The Glicko-2 arithmetic the lobby rates players with, checked against the worked example of
// Glickman's paper and the shape every rating system must have.
#include "lobby-server/rating/glicko2.h"

#include <gtest/gtest.h>

namespace ply {
namespace {

using ::ply::lobby::Glicko;
using ::ply::lobby::GlickoUpdate;

TEST(Glicko2, MatchesTheWorkedExampleOfThePaper) {
  // Glickman, "Example of the Glicko-2 system": 1500/200/0.06 beats 1400/30, loses to 1550/100
  // and to 1700/300 (tau 0.5): 1464.06, 151.52, 0.05999.
  const Glicko after = GlickoUpdate({.rating = 1500, .deviation = 200, .volatility = 0.06},
                                    {{.opponent = {.rating = 1400, .deviation = 30}, .score = 1},
                                     {.opponent = {.rating = 1550, .deviation = 100}, .score = 0},
                                     {.opponent = {.rating = 1700, .deviation = 300}, .score = 0}});
  EXPECT_NEAR(after.rating, 1464.06, 0.01);
  EXPECT_NEAR(after.deviation, 151.52, 0.01);
  EXPECT_NEAR(after.volatility, 0.05999, 0.00001);
}

TEST(Glicko2, AWinAgainstAnEqualMovesANewcomerFarAndASettledPlayerLittle) {
  const Glicko newcomer = GlickoUpdate({}, {{.opponent = {}, .score = 1}});
  EXPECT_GT(newcomer.rating, 1600);
  EXPECT_LT(newcomer.deviation, 350);
  const Glicko settled =
      GlickoUpdate({.rating = 1500, .deviation = 60},
                   {{.opponent = {.rating = 1500, .deviation = 60}, .score = 1}});
  EXPECT_GT(settled.rating, 1500);
  EXPECT_LT(settled.rating, 1520);
  // A draw between equals changes no rating.
  EXPECT_NEAR(GlickoUpdate({}, {{.opponent = {}, .score = 0.5}}).rating, 1500, 1e-6);
}

}  // namespace
}  // namespace ply
