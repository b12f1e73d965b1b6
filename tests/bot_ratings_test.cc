// The bot levels on the players' rating scale end to end: a person and a level rated on one
// scale, every level shown at its ladder rating, a level as a fixed point that thrown games
// cannot move, and a restart putting every level back on the ladder. Real PostgreSQL, ply-bot
// and ply-lobby processes.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/registry/registry.h"
#include "lobby-server/rating/glicko2.h"
#include "lobby-server/rating/ratings.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/players_fixture.h"
#include "tests/players_helper.h"

namespace ply {
namespace {

using ::ply::lobby::Glicko;
using ::ply::lobby::GlickoUpdate;
using ::ply::lobby::NewcomerRating;
using ::ply::testing::GetMatch;
using ::ply::testing::PlayerAgainstBot;
using ::ply::testing::PlayersTest;
using ::ply::testing::Resign;

TEST_F(PlayersTest, ThePersonAndTheBotLevelAreRatedOnOneScaleAndSettledOnesLead) {
  const std::string alice = Register("alice");
  v1::CreateMatchResponse created;
  ASSERT_TRUE(PlayerAgainstBot(stub_.get(), "tictactoe", alice, "beginner", &created,
                               [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(0); })
                  .ok());
  EXPECT_EQ(created.match().seats(1).player(), "bot:beginner");
  ::ply::testing::MoveAndAwaitTheBot(stub_.get(), created.match().id(), 0, "b2",
                                     created.seat_token());
  grpc::Status resigned = Resign(stub_.get(), created.match().id(), created.seat_token());
  ASSERT_TRUE(resigned.ok()) << resigned.error_message();
  const v1::Player level = Whois("bot:beginner");
  EXPECT_TRUE(level.bot());
  // The bot levels start from their ladder ratings in every game, settled.
  ASSERT_EQ(level.ratings_size(), static_cast<int>(ListGames().size()));
  for (const v1::GameRating& r : level.ratings()) {
    EXPECT_EQ(r.wins(), r.game() == "tictactoe" ? 1 : 0) << r.game();
    EXPECT_FALSE(r.provisional()) << r.game();
  }
  // The leaderboard lists settled ratings only: the bot levels, not alice (provisional).
  v1::LeaderboardRequest top;
  top.set_game("tictactoe");
  v1::LeaderboardResponse board;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Leaderboard(&context, top, &board).ok());
  }
  ASSERT_EQ(board.entries_size(), static_cast<int>(FindGame("tictactoe")->levels.size()));
  for (int i = 0; i < board.entries_size(); ++i) {
    EXPECT_TRUE(board.entries(i).bot()) << board.entries(i).name();
    EXPECT_EQ(board.entries(i).rank(), i + 1);
    if (i > 0) {
      EXPECT_LE(board.entries(i).rating(), board.entries(i - 1).rating());
    }
  }
  Sql("UPDATE ratings SET deviation = 60, rating = 9000 WHERE player_id = "
      "(SELECT id FROM players WHERE name = 'alice')");
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Leaderboard(&context, top, &board).ok());
  }
  ASSERT_GE(board.entries_size(), 1);
  EXPECT_EQ(board.entries(0).name(), "alice") << "once settled, alice leads";
  EXPECT_FALSE(board.entries(0).bot());
}

// The level `level` of `game` as this lobby's ListGames shows it.
v1::DifficultyLevel ListedLevel(v1::LobbyService::Stub* stub, const std::string& game,
                                const std::string& level) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::ListGamesResponse games;
  grpc::Status s = stub->ListGames(&context, v1::ListGamesRequest(), &games);
  EXPECT_TRUE(s.ok()) << s.error_message();
  for (const v1::GameInfo& g : games.games()) {
    for (const v1::DifficultyLevel& l : g.levels()) {
      if (g.name() == game && l.name() == level) return l;
    }
  }
  ADD_FAILURE() << "no level " << level << " of " << game;
  return {};
}

TEST_F(PlayersTest, ListGamesShowsEveryLevelsLadderRating) {
  grpc::ClientContext context;
  v1::ListGamesResponse games;
  ASSERT_TRUE(stub_->ListGames(&context, v1::ListGamesRequest(), &games).ok());
  ASSERT_EQ(games.games_size(), static_cast<int>(ListGames().size()));
  for (const v1::GameInfo& g : games.games()) {
    const GameInfo* info = FindGame(g.name());
    ASSERT_NE(info, nullptr);
    ASSERT_EQ(g.levels_size(), static_cast<int>(info->levels.size())) << g.name();
    for (const v1::DifficultyLevel& l : g.levels()) {
      const LadderRating* r = info->ladder.Find(l.name());
      ASSERT_NE(r, nullptr) << g.name() << " " << l.name();
      EXPECT_EQ(l.rating_source(), v1::RATING_SOURCE_LADDER) << g.name() << " " << l.name();
      EXPECT_EQ(l.rating(), static_cast<int>(std::lround(r->rating)));
      EXPECT_EQ(l.ladder_rating(), l.rating());
      EXPECT_EQ(l.ladder_error(), static_cast<int>(std::lround(r->error)));
      EXPECT_EQ(l.ladder_command(), info->ladder.command);
      EXPECT_EQ(l.rated_games(), 0);
    }
  }
}

TEST_F(PlayersTest, ABotLevelIsAFixedPointOfTheScaleThatThrowawayGamesCannotMove) {
  const LadderRating* ladder = FindGame("connect4")->ladder.Find("easy");
  ASSERT_NE(ladder, nullptr);
  const Glicko start{.rating = ladder->rating,
                     .deviation = std::clamp(ladder->error / 1.96, 30.0, 350.0)};
  const int start_rating = static_cast<int>(std::lround(start.rating));
  // Seeded when the lobby started, before any game: whois and the leaderboard see it.
  const v1::Player fresh = Whois("bot:easy");
  EXPECT_TRUE(fresh.bot());
  auto rating_in = [](const v1::Player& p, const std::string& game) {
    for (const v1::GameRating& r : p.ratings()) {
      if (r.game() == game) return r;
    }
    ADD_FAILURE() << p.name() << " has no rating in " << game;
    return v1::GameRating();
  };
  EXPECT_EQ(rating_in(fresh, "connect4").rating(), start_rating);
  EXPECT_EQ(rating_in(fresh, "connect4").deviation(),
            static_cast<int>(std::lround(start.deviation)));
  EXPECT_EQ(rating_in(fresh, "connect4").games(), 0);
  // The sandbagging attack: a fresh account resigns rated games against the level (after a move
  // each: a resignation before that is not rated).
  // Each counts in both records and moves the person's rating; the level's stays where the
  // ladder put it.
  const std::string alice = Register("alice");
  Glicko person;
  constexpr int kThrown = 6;
  for (int i = 0; i < kThrown; ++i) {
    v1::CreateMatchResponse created;
    grpc::Status s = PlayerAgainstBot(stub_.get(), "connect4", alice, "easy", &created);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(created.match().seats(1).player(), "bot:easy");
    EXPECT_EQ(created.match().seats(1).rating(), start_rating);
    ::ply::testing::MoveAndAwaitTheBot(stub_.get(), created.match().id(), 0, "4",
                                       created.seat_token());
    ASSERT_TRUE(Resign(stub_.get(), created.match().id(), created.seat_token()).ok());
    person = GlickoUpdate(person, {{.opponent = start, .score = 0}});
    absl::StatusOr<v1::Match> ended = GetMatch(stub_.get(), created.match().id());
    ASSERT_TRUE(ended.ok());
    EXPECT_EQ(ended->seats(1).rating_after(), start_rating);
    EXPECT_EQ(ended->seats(0).rating_after(), static_cast<int>(std::lround(person.rating)));
  }
  const v1::GameRating after = rating_in(Whois("bot:easy"), "connect4");
  EXPECT_EQ(after.rating(), start_rating);
  EXPECT_EQ(after.games(), kThrown);
  EXPECT_EQ(after.wins(), kThrown);
  EXPECT_EQ(rating_in(Whois("alice"), "connect4").rating(),
            static_cast<int>(std::lround(person.rating)));
  EXPECT_LT(person.rating, 1400) << "the person's own rating does move";
  // ListGames shows the ladder's rating and the games played.
  const v1::DifficultyLevel easy = ListedLevel(stub_.get(), "connect4", "easy");
  EXPECT_EQ(easy.rating_source(), v1::RATING_SOURCE_LADDER);
  EXPECT_EQ(easy.rating(), start_rating);
  EXPECT_EQ(easy.rated_games(), kThrown);
  EXPECT_EQ(ListedLevel(stub_.get(), "tictactoe", "easy").rated_games(), 0);
}

// Tic-Tac-Toe's whole scale lies below 1500: its perfect level, which nobody can beat, is rated
// about 900. A newcomer started at 1500 and lost 296 points for a draw against it, the best
// result the game allows; now a newcomer starts at the game's ceiling and a draw there costs
// nothing. Games whose scale reaches past 1500 start at 1500 as before.
TEST_F(PlayersTest, ANewcomerToTicTacToeStartsAtItsCeilingAndADrawWithPerfectCostsNothing) {
  const double start = NewcomerRating("tictactoe");
  const LadderRating* perfect_ladder = FindGame("tictactoe")->ladder.Find("perfect");
  ASSERT_NE(perfect_ladder, nullptr);
  EXPECT_LT(start, 1000);
  EXPECT_GE(start, perfect_ladder->rating);
  EXPECT_EQ(NewcomerRating("connect4"), 1500);
  EXPECT_EQ(NewcomerRating("no such game"), 1500);

  const std::string alice = Register("alice");
  v1::CreateMatchResponse created;
  ASSERT_TRUE(PlayerAgainstBot(stub_.get(), "tictactoe", alice, "perfect", &created,
                               [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(0); })
                  .ok());
  const int64_t id = created.match().id();
  EXPECT_EQ(created.match().seats(0).rating(), static_cast<int>(std::lround(start)));
  ::ply::testing::MoveAndAwaitTheBot(stub_.get(), id, 0, "b2", created.seat_token());
  {
    // After the centre and the bot's answer the game is a proven draw: the level agrees at once.
    v1::OfferDrawRequest request;
    request.set_match_id(id);
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + created.seat_token());
    v1::Match offered;
    grpc::Status s = stub_->OfferDraw(&context, request, &offered);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  const v1::Match end = ::ply::testing::WaitMatch(
      stub_.get(), id, [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; },
      absl::Seconds(10));
  ASSERT_EQ(end.result().reason(), v1::END_REASON_AGREEMENT);
  const Glicko perfect{.rating = perfect_ladder->rating,
                       .deviation = std::clamp(perfect_ladder->error / 1.96, 30.0, 350.0)};
  const Glicko after = GlickoUpdate({.rating = start}, {{.opponent = perfect, .score = 0.5}});
  EXPECT_EQ(end.seats(0).rating(), static_cast<int>(std::lround(start)));
  EXPECT_EQ(end.seats(0).rating_after(), static_cast<int>(std::lround(after.rating)));
  EXPECT_GE(end.seats(0).rating_after(), end.seats(0).rating() - 10)
      << "a draw with the perfect level is the best result Tic-Tac-Toe allows";

  // The rating row made at the game's end starts there too, and pairing and a second game read
  // it.
  v1::CreateMatchResponse second;
  ASSERT_TRUE(PlayerAgainstBot(stub_.get(), "tictactoe", alice, "easy", &second).ok());
  EXPECT_EQ(second.match().seats(0).rating(), end.seats(0).rating_after());
  // Joining an open seat: a second newcomer takes it at the game's start too.
  const std::string bob = Register("bob");
  v1::CreateMatchRequest open;
  open.mutable_spec()->set_name("tictactoe");
  open.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  open.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  open.set_take_seat(0);
  v1::CreateMatchResponse waiting;
  {
    grpc::ClientContext context;
    context.AddMetadata("x-ply-player", alice);
    ASSERT_TRUE(stub_->CreateMatch(&context, open, &waiting).ok());
  }
  v1::JoinMatchRequest join;
  join.set_match_id(waiting.match().id());
  join.set_seat(1);
  v1::JoinMatchResponse joined;
  {
    grpc::ClientContext context;
    context.AddMetadata("x-ply-player", bob);
    grpc::Status s = stub_->JoinMatch(&context, join, &joined);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  absl::StatusOr<v1::Match> started = GetMatch(stub_.get(), waiting.match().id());
  ASSERT_TRUE(started.ok());
  EXPECT_EQ(started->seats(1).player(), "bob");
  EXPECT_EQ(started->seats(1).rating(), static_cast<int>(std::lround(start)));
  EXPECT_EQ(joined.match().seats(1).rating(), static_cast<int>(std::lround(start)));
}

// With a clock of half a second a script that answered at once beat bots on time, rated (the
// lobby's pacing, since fixed); at such clocks round trips weigh as much as the play. A rated
// game's clock gives at least 15 s for 40 moves; a faster one is casual.
TEST_F(PlayersTest, ARatedGameNeedsAClockOfFifteenSecondsForFortyMoves) {
  const std::string alice = Register("alice");
  auto against_bot = [&](int64_t initial_ms, int64_t increment_ms, bool casual) {
    v1::CreateMatchResponse created;
    return PlayerAgainstBot(stub_.get(), "connect4", alice, "hard", &created,
                            [&](v1::CreateMatchRequest& r) {
                              r.mutable_time_control()->set_initial_ms(initial_ms);
                              r.mutable_time_control()->set_increment_ms(increment_ms);
                              r.set_casual(casual);
                            });
  };
  grpc::Status refused = against_bot(540, 0, false);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused.error_message(),
            "a rated game's clock gives at least 15 s for 40 moves (its initial time and 40 "
            "increments); this one gives 0.54 s: ask for a casual game (ply new ... --casual) or "
            "a longer clock");
  EXPECT_EQ(against_bot(14000, 0, false).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(against_bot(540, 0, true).ok()) << "casual: as fast as anyone likes";
  EXPECT_TRUE(against_bot(15000, 0, false).ok());
  EXPECT_TRUE(against_bot(1000, 500, false).ok()) << "1 s and 40 increments of 0.5 s";

  // Pairing for a rated game: the same bound, said before the player waits.
  v1::PairRequest pair;
  pair.mutable_spec()->set_name("connect4");
  pair.mutable_time_control()->set_initial_ms(540);
  grpc::ClientContext context;
  context.AddMetadata("x-ply-player", alice);
  std::unique_ptr<grpc::ClientReader<v1::PairEvent>> reader = stub_->Pair(&context, pair);
  v1::PairEvent event;
  EXPECT_FALSE(reader->Read(&event));
  const grpc::Status paired = reader->Finish();
  EXPECT_EQ(paired.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(paired.error_message(), "a rated game's clock"))
      << paired.error_message();
}

TEST_F(PlayersTest, ARestartPutsEveryBotLevelBackOnItsLadderRating) {
  // A database from before bot levels were fixed: bot:hard was moved by games (from 1500),
  // bot:medium has a row no game moved, bot:beginner none. Another start gives each the
  // ladder's rating and keeps the games played.
  Sql("UPDATE ratings SET rating = 1432, deviation = 200, games = 3 WHERE game = "
      "'connect4' AND player_id = (SELECT id FROM players WHERE name = 'bot:hard')");
  Sql("UPDATE ratings SET rating = 1500, deviation = 350 WHERE game = 'connect4' AND"
      " player_id = (SELECT id FROM players WHERE name = 'bot:medium')");
  Sql("DELETE FROM ratings WHERE game = 'connect4' AND"
      " player_id = (SELECT id FROM players WHERE name = 'bot:beginner')");
  lobby_.reset();
  StartLobby();
  const LadderData& ladder = FindGame("connect4")->ladder;
  for (const std::string level : {"hard", "medium", "beginner"}) {
    const v1::DifficultyLevel l = ListedLevel(stub_.get(), "connect4", level);
    EXPECT_EQ(l.rating(), static_cast<int>(std::lround(ladder.Find(level)->rating))) << level;
    EXPECT_EQ(l.rating_source(), v1::RATING_SOURCE_LADDER) << level;
    EXPECT_EQ(l.rated_games(), level == "hard" ? 3 : 0) << level;
  }
  EXPECT_EQ(Sql(
                // numeric rounds a half away from zero, as std::lround does
                // (round() on a double rounds it to even: 1716.5 to 1716).
                "SELECT round(rating::numeric) FROM ratings WHERE game = 'connect4' AND"
                " player_id = (SELECT id FROM players WHERE name = 'bot:hard')"),
            absl::StrCat(std::lround(ladder.Find("hard")->rating)));
  EXPECT_EQ(Sql("SELECT count(*) FROM players WHERE name = 'bot:medium'"), "1");
}

}  // namespace
}  // namespace ply
