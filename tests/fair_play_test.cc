// The rules that protect results and ratings, unit-tested where they live (no database, no
// process): each test plays an attack against the rule. The same attacks against a running
// stack are in players_test (real PostgreSQL and ply-lobby) and deploy/local/fair-play.
#include <gtest/gtest.h>

#include <array>
#include <optional>

#include "lobby-server/players/glicko2.h"
#include "lobby-server/players/ratings.h"
#include "lobby-server/storage/store.h"

namespace ply::lobby {
namespace {

MatchResult Won(int winner, EndReason reason = EndReason::kResignation) {
  return {.winner = winner, .reason = reason, .text = "test"};
}

TEST(Ratings, OnePlayerOnBothSeatsMovesNoRating) {
  // The farming attack: seat 1 resigns to seat 0, both the same account.
  const std::array<RatedSeat, 2> self = {RatedSeat{.player_id = 7}, RatedSeat{.player_id = 7}};
  EXPECT_FALSE(RateResult(self, Won(0)).has_value());
  EXPECT_FALSE(RateResult(self, Won(-1, EndReason::kAgreement)).has_value());
  // Two players: both move, the winner up and the loser down, by Glicko-2.
  const std::array<RatedSeat, 2> two = {RatedSeat{.player_id = 7}, RatedSeat{.player_id = 8}};
  std::optional<std::array<SeatRating, 2>> rated = RateResult(two, Won(0));
  ASSERT_TRUE(rated.has_value());
  EXPECT_EQ((*rated)[0].score, 1.0);
  EXPECT_EQ((*rated)[1].score, 0.0);
  EXPECT_DOUBLE_EQ((*rated)[0].after.rating,
                   GlickoUpdate({}, {{.opponent = {}, .score = 1}}).rating);
  EXPECT_DOUBLE_EQ((*rated)[1].after.rating,
                   GlickoUpdate({}, {{.opponent = {}, .score = 0}}).rating);
}

TEST(Ratings, ResultsThatSayNothingMoveNoRating) {
  const std::array<RatedSeat, 2> two = {RatedSeat{.player_id = 1}, RatedSeat{.player_id = 2}};
  for (EndReason none :
       {EndReason::kNone, EndReason::kBotFailure, EndReason::kCancelled, EndReason::kAborted}) {
    EXPECT_FALSE(RateResult(two, Won(0, none)).has_value()) << static_cast<int>(none);
    EXPECT_FALSE(ResultCounts(Won(0, none)));
  }
  for (EndReason counts : {EndReason::kRules, EndReason::kResignation, EndReason::kTimeout,
                           EndReason::kAgreement, EndReason::kAbandoned}) {
    EXPECT_TRUE(RateResult(two, Won(1, counts)).has_value()) << static_cast<int>(counts);
  }
  // A guest's seat (no player) makes the match unrated.
  EXPECT_FALSE(RateResult({RatedSeat{.player_id = 1}, RatedSeat{}}, Won(0)).has_value());
}

TEST(Ratings, ABotLevelIsAFixedPointThatThrowawayGamesCannotMove) {
  // The sandbagging attack: a person resigns 60 rated games to bot:beginner at once.
  const Glicko beginner{.rating = 812, .deviation = 40};
  Glicko person;
  for (int i = 0; i < 60; ++i) {
    const std::array<RatedSeat, 2> seats = {
        RatedSeat{.player_id = 100, .before = person},
        RatedSeat{.player_id = 3, .bot = true, .before = beginner}};
    std::optional<std::array<SeatRating, 2>> rated = RateResult(seats, Won(1));
    ASSERT_TRUE(rated.has_value());
    EXPECT_EQ((*rated)[1].after.rating, beginner.rating);
    EXPECT_EQ((*rated)[1].after.deviation, beginner.deviation);
    EXPECT_EQ((*rated)[1].score, 1.0) << "the game still counts in the bot's record";
    EXPECT_LT((*rated)[0].after.rating, person.rating);
    person = (*rated)[0].after;
  }
  EXPECT_LT(person.rating, 812) << "only the person who threw the games went down";
}

TEST(Ratings, OnePlayerMayNotTakeASecondSeatOfARatedMatch) {
  MatchRecord match;
  match.id = 42;
  match.rated = true;
  match.seats.resize(2);
  match.seats[0].player_id = 5;
  match.seats[0].token_hash = "h";
  const absl::Status own = CheckSeatOfRatedMatch(match, 5);
  EXPECT_EQ(own.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(own.message().find("seat 1 of match 42"), std::string_view::npos) << own;
  EXPECT_TRUE(CheckSeatOfRatedMatch(match, 6).ok());
  EXPECT_TRUE(CheckSeatOfRatedMatch(match, 0).ok()) << "a guest makes it casual instead";
  match.rated = false;
  EXPECT_TRUE(CheckSeatOfRatedMatch(match, 5).ok()) << "a casual match against oneself";
}

}  // namespace
}  // namespace ply::lobby
