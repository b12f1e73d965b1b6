// Players end to end: registering and logging in again with the player key, names unique
// ignoring case, a rated game moving both ratings by the Glicko-2 formulas in the transaction
// that ends it, a guest making a match casual, whois, history and the leaderboard. The Glicko-2
// arithmetic itself is checked against the worked example of Glickman's paper. Real
// PostgreSQL, ply-bot and ply-lobby processes.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/registry/registry.h"
#include "lobby-server/names.h"
#include "lobby-server/rating/glicko2.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/players_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::lobby::Glicko;
using ::ply::lobby::GlickoUpdate;
using ::ply::testing::GetMatch;
using ::ply::testing::GetPlayer;
using ::ply::testing::HumanSeats;
using ::ply::testing::JoinAsPlayer;
using ::ply::testing::Login;
using ::ply::testing::Move;
using ::ply::testing::PlayerAgainstBot;
using ::ply::testing::PlayersMatch;
using ::ply::testing::Resign;
using ::ply::testing::ServerProcess;

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

class PlayersTest : public ::ply::testing::StackFixture {
 protected:
  void SetUp() override {
    UseNewDatabase("players");
    if (HasFatalFailure()) return;
    StartLobby();
  }

  // Registers `name`: its player key.
  std::string Register(const std::string& name) {
    const std::string key = ::ply::testing::Register(stub_.get(), name);
    EXPECT_GE(key.size(), 32u);
    return key;
  }

  // A match of `game` between two players (or a guest for an empty key): the seat tokens.
  HumanSeats PlayerMatch(const std::string& game, const std::string& key0, const std::string& key1,
                         bool casual = false) {
    return PlayersMatch(
        stub_.get(), game, key0, key1,
        [casual](v1::CreateMatchRequest& r) {
          r.set_display_name("guest-a");
          r.set_casual(casual);
        },
        /*joiner_name=*/"guest-b");
  }

  v1::Player Whois(const std::string& name) { return GetPlayer(stub_.get(), name); }
};

TEST_F(PlayersTest, RegistersAndLogsInAgainWithTheKeyAndNamesAreUniqueIgnoringCase) {
  const std::string key = Register("Alice_1");
  v1::LoginResponse again;
  ASSERT_TRUE(Login(stub_.get(), "alice_1", key, &again).ok()) << "case does not matter";
  EXPECT_EQ(again.player().name(), "Alice_1");
  EXPECT_TRUE(again.player_key().empty()) << "the key is shown once, at registration";
  v1::LoginResponse taken;
  grpc::Status s = Login(stub_.get(), "ALICE_1", "", &taken);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_NE(s.error_message().find("--key"), std::string::npos) << s.error_message();
  for (const std::string& bad : std::vector<std::string>{"a", "x y", "-dash", "botty", "Bot_3",
                                                         std::string(25, 'n'), "na\xc3\xafve"}) {
    EXPECT_EQ(Login(stub_.get(), bad, "", &taken).error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << bad;
  }
  const std::string other = Register("bob.b");
  EXPECT_EQ(Login(stub_.get(), "Alice_1", other, &taken).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Login(stub_.get(), "Alice_1", std::string(32, 'f'), &taken).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(PlayersTest, NamesThatLookLikeAPlayersAreRefusedToPlayersAndGuests) {
  // The impersonation attack: "aIice" (a capital i) registers beside alice, and guests take
  // her name, a bot's, or a look-alike of either.
  const std::string alice = Register("alice");
  v1::LoginResponse refused;
  for (const char* like : {"aIice", "a1ice", "ALICE", "al.ice"}) {
    grpc::Status s = Login(stub_.get(), like, "", &refused);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << like;
    EXPECT_NE(absl::AsciiStrToLower(s.error_message()).find("alice"), std::string::npos)
        << s.error_message();
  }
  auto guest_create = [&](const std::string& name) {
    v1::CreateMatchRequest create;
    create.mutable_spec()->set_name("tictactoe");
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.set_take_seat(0);
    create.set_display_name(name);
    grpc::ClientContext context;
    v1::CreateMatchResponse created;
    return stub_->CreateMatch(&context, create, &created);
  };
  for (const char* name : {"alice", "Alice", "\u0430lice", "\uff41\uff4c\uff49\uff43\uff45",
                           "b\u043et (hard)", "bot:hard", "\uff42\uff4f\uff54"}) {
    grpc::Status s = guest_create(name);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << name;
  }
  EXPECT_TRUE(guest_create("alicia").ok());
  // Joining as a guest under her name is refused too; alice herself joins with her key.
  v1::CreateMatchResponse open;
  ASSERT_TRUE(::ply::testing::Create(stub_.get(), "tictactoe",
                                     {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &open,
                                     ::ply::testing::TakingSeat(0, "carol"))
                  .ok());
  v1::JoinMatchRequest join;
  join.set_match_id(open.match().id());
  join.set_display_name("\u0430lice");
  {
    grpc::ClientContext context;
    v1::JoinMatchResponse joined;
    EXPECT_EQ(stub_->JoinMatch(&context, join, &joined).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  v1::JoinMatchResponse joined;
  ASSERT_TRUE(JoinAsPlayer(stub_.get(), open.match().id(), 1, alice, &joined).ok());
  EXPECT_EQ(joined.match().seats(1).display_name(), "alice");
  // The migration's SQL skeleton of players' names (ASCII) is NameSkeleton's.
  for (const char* name : {"Alice_1", "b0b.rnx", "VVill-0", "Mi1o", "iIlL1"}) {
    EXPECT_EQ(Sql(absl::StrCat("SELECT replace(replace(translate(lower('", name,
                               "'), '10i|_-.', 'loll'), 'rn', 'm'), 'vv', 'w')")),
              lobby::NameSkeleton(name))
        << name;
  }
}

TEST_F(PlayersTest, ARatedGameMovesBothRatingsByGlicko2) {
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  auto [id, tokens] = PlayerMatch("connect4", alice, bob);
  absl::StatusOr<v1::Match> before = GetMatch(stub_.get(), id);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->seats(0).player(), "alice");
  EXPECT_EQ(before->seats(1).player(), "bob");
  EXPECT_EQ(before->seats(0).display_name(), "alice");
  EXPECT_EQ(before->seats(0).rating(), 1500);
  EXPECT_TRUE(before->seats(0).provisional());
  // Alice wins with four in column 1.
  const char* moves[] = {"1", "2", "1", "2", "1", "2", "1"};
  for (int ply = 0; ply < 7; ++ply) {
    grpc::Status s = Move(stub_.get(), id, ply, moves[ply], ply % 2 ? tokens[1] : tokens[0]);
    ASSERT_TRUE(s.ok()) << "ply " << ply << ": " << s.error_message();
  }
  absl::StatusOr<v1::Match> after = GetMatch(stub_.get(), id);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->status(), v1::MATCH_STATUS_FINISHED);
  const Glicko won = GlickoUpdate({}, {{.opponent = {}, .score = 1}});
  const Glicko lost = GlickoUpdate({}, {{.opponent = {}, .score = 0}});
  EXPECT_EQ(after->seats(0).rating_after(), static_cast<int>(std::lround(won.rating)));
  EXPECT_EQ(after->seats(1).rating_after(), static_cast<int>(std::lround(lost.rating)));
  const v1::Player a = Whois("alice");
  ASSERT_EQ(a.ratings_size(), 1);
  EXPECT_EQ(a.ratings(0).game(), "connect4");
  EXPECT_EQ(a.ratings(0).rating(), static_cast<int>(std::lround(won.rating)));
  EXPECT_EQ(a.ratings(0).deviation(), static_cast<int>(std::lround(won.deviation)));
  EXPECT_EQ(a.ratings(0).games(), 1);
  EXPECT_EQ(a.ratings(0).wins(), 1);
  EXPECT_TRUE(a.ratings(0).provisional());
  EXPECT_EQ(Whois("bob").ratings(0).losses(), 1);
  // A resignation is rated too; the next game starts from the new ratings.
  auto [second, t2] = PlayerMatch("connect4", bob, alice);
  EXPECT_EQ(GetMatch(stub_.get(), second)->seats(0).rating(),
            static_cast<int>(std::lround(lost.rating)));
  ASSERT_TRUE(Resign(stub_.get(), second, t2[0]).ok());
  EXPECT_EQ(Whois("alice").ratings(0).wins(), 2);
  // History: newest first, both matches.
  v1::ListPlayerMatchesRequest history;
  history.set_name("ALICE");
  grpc::ClientContext context;
  v1::ListMatchesResponse list;
  ASSERT_TRUE(stub_->ListPlayerMatches(&context, history, &list).ok());
  ASSERT_EQ(list.matches_size(), 2);
  EXPECT_EQ(list.matches(0).id(), second);
  EXPECT_EQ(list.matches(1).id(), id);
  EXPECT_EQ(list.matches(1).seats(0).player(), "alice");
}

TEST_F(PlayersTest, ASeatShowsTheRatingRoundedAsTheProfileRoundsIt) {
  // Ratings of a half: the seat of the creator and the seat taken by a join both show what
  // the players' profiles show (a double rounded to even in SQL showed 1600 beside 1601).
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  auto [first, t1] = PlayerMatch("connect4", alice, bob);
  ASSERT_TRUE(Resign(stub_.get(), first, t1[1]).ok());
  // Each game moves the ratings: set the halves again before the next.
  auto set_halves = [&] {
    Sql("UPDATE ratings SET rating = CASE WHEN player_id = (SELECT id FROM players WHERE name ="
        " 'alice') THEN 1600.5 ELSE 1402.5 END, deviation = 80.5 WHERE game = 'connect4'");
  };
  set_halves();
  ASSERT_EQ(Whois("alice").ratings(0).rating(), 1601);
  ASSERT_EQ(Whois("bob").ratings(0).rating(), 1403);
  for (const bool alice_creates : {true, false}) {
    auto [id, tokens] =
        alice_creates ? PlayerMatch("connect4", alice, bob) : PlayerMatch("connect4", bob, alice);
    absl::StatusOr<v1::Match> m = GetMatch(stub_.get(), id);
    ASSERT_TRUE(m.ok());
    const int a = alice_creates ? 0 : 1;
    EXPECT_EQ(m->seats(a).rating(), 1601) << alice_creates;
    EXPECT_EQ(m->seats(1 - a).rating(), 1403) << alice_creates;
    // The deviation kept beside it (what makes a seat provisional) rounds the same way.
    EXPECT_EQ(Sql(absl::StrCat("SELECT string_agg(deviation_before::text, ',' ORDER BY seat)"
                               " FROM seats WHERE match_id = ",
                               id)),
              "81,81")
        << alice_creates;
    ASSERT_TRUE(Resign(stub_.get(), id, tokens[0]).ok());
    set_halves();
  }
}

TEST_F(PlayersTest, OnePlayerCannotHoldBothSeatsOfARatedMatch) {
  // The farming attack: alice opens a rated match and takes its other seat with her own key,
  // to resign to herself game after game.
  const std::string alice = Register("alice");
  auto open = [&](bool casual, bool take_seat) {
    v1::CreateMatchRequest create;
    create.mutable_spec()->set_name("tictactoe");
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    if (take_seat) create.set_take_seat(0);
    create.set_casual(casual);
    grpc::ClientContext context;
    context.AddMetadata("x-ply-player", alice);
    v1::CreateMatchResponse created;
    grpc::Status s = stub_->CreateMatch(&context, create, &created);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return created;
  };
  const v1::CreateMatchResponse rated = open(/*casual=*/false, /*take_seat=*/true);
  v1::JoinMatchResponse joined;
  grpc::Status s = JoinAsPlayer(stub_.get(), rated.match().id(), 1, alice, &joined);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("both seats of a rated match"), std::string::npos)
      << s.error_message();
  // Both seats open at creation: the first join takes one, the second is refused the same way.
  const v1::CreateMatchResponse open_both = open(/*casual=*/false, /*take_seat=*/false);
  ASSERT_TRUE(JoinAsPlayer(stub_.get(), open_both.match().id(), 0, alice, &joined).ok());
  s = JoinAsPlayer(stub_.get(), open_both.match().id(), 1, alice, &joined);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  // A casual match may be played against oneself, and moves no rating.
  const v1::CreateMatchResponse casual = open(/*casual=*/true, /*take_seat=*/true);
  s = JoinAsPlayer(stub_.get(), casual.match().id(), 1, alice, &joined);
  ASSERT_TRUE(s.ok()) << s.error_message();
  v1::Match ended;
  ASSERT_TRUE(Resign(stub_.get(), casual.match().id(), joined.seat_token(), &ended).ok());
  EXPECT_EQ(ended.seats(0).rating_after(), 0);
  EXPECT_EQ(Whois("alice").ratings_size(), 0);
  // Another player may take the seat alice could not, and the match is rated.
  const std::string bob = Register("bob");
  ASSERT_TRUE(JoinAsPlayer(stub_.get(), rated.match().id(), 1, bob, &joined).ok());
  ASSERT_TRUE(Resign(stub_.get(), rated.match().id(), joined.seat_token()).ok());
  absl::StatusOr<v1::Match> rated_end = GetMatch(stub_.get(), rated.match().id());
  ASSERT_TRUE(rated_end.ok());
  EXPECT_GT(rated_end->seats(0).rating_after(), 1500);
  EXPECT_LT(rated_end->seats(1).rating_after(), 1500);
}

TEST_F(PlayersTest, ARatedMatchWithOnePlayerOnBothSeatsMovesNoRatingEvenIfTheJoinRaced) {
  // The database's last word: were the join check ever raced (two instances at once), the
  // transaction that ends the match still moves nobody's rating.
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  auto [id, tokens] = PlayerMatch("tictactoe", alice, bob);
  Sql(
      absl::StrCat("UPDATE seats SET player_id = (SELECT player_id FROM seats"
                   " WHERE match_id = ",
                   id, " AND seat = 0) WHERE match_id = ", id, " AND seat = 1"));
  ASSERT_TRUE(Resign(stub_.get(), id, tokens[1]).ok());
  EXPECT_EQ(Whois("alice").ratings_size(), 0);
  EXPECT_EQ(Whois("bob").ratings_size(), 0);
}

TEST_F(PlayersTest, QuotasCountAgainstThePlayerNotTheAddress) {
  // Two players behind one address (this test's) each have their own quota of open matches.
  lobby_.reset();
  StartLobby({"--client_waiting_matches=1"});
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  auto open = [&](const std::string& key) {
    v1::CreateMatchRequest create;
    create.mutable_spec()->set_name("tictactoe");
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.set_take_seat(0);
    create.set_display_name("guest");
    grpc::ClientContext context;
    if (!key.empty()) context.AddMetadata("x-ply-player", key);
    v1::CreateMatchResponse created;
    return stub_->CreateMatch(&context, create, &created).error_code();
  };
  EXPECT_EQ(open(alice), grpc::StatusCode::OK);
  EXPECT_EQ(open(alice), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(open(bob), grpc::StatusCode::OK) << "bob is not held back by alice";
  EXPECT_EQ(open(""), grpc::StatusCode::OK) << "a guest counts by address";
  EXPECT_EQ(open(""), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(PlayersTest, AGuestOrACasualMatchMovesNoRating) {
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  for (auto [key1, casual] : {std::pair{std::string(), false}, std::pair{bob, true}}) {
    auto [id, tokens] = PlayerMatch("tictactoe", alice, key1, casual);
    v1::Match m;
    ASSERT_TRUE(Resign(stub_.get(), id, tokens[1], &m).ok());
    EXPECT_EQ(m.seats(0).rating_after(), 0);
  }
  EXPECT_EQ(Whois("alice").ratings_size(), 0);
}

TEST_F(PlayersTest, ThePersonAndTheBotLevelAreRatedOnOneScaleAndSettledOnesLead) {
  const std::string alice = Register("alice");
  v1::CreateMatchResponse created;
  ASSERT_TRUE(PlayerAgainstBot(stub_.get(), "tictactoe", alice, "beginner", &created,
                               [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(0); })
                  .ok());
  EXPECT_EQ(created.match().seats(1).player(), "bot:beginner");
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
  // The sandbagging attack: a fresh account resigns rated games against the level at once.
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

// One player in the pairing queue, its stream read on a thread of its own.
class Pairer {
 public:
  Pairer(v1::LobbyService::Stub* stub, const std::string& key, const std::string& game) {
    context_.AddMetadata("x-ply-player", key);
    v1::PairRequest request;
    request.mutable_spec()->set_name(game);
    start_ = absl::Now();
    reader_ = stub->Pair(&context_, request);
    thread_ = std::thread([this] {
      v1::PairEvent e;
      while (reader_->Read(&e)) {
        std::lock_guard<std::mutex> lock(mu_);
        events_.push_back(e);
        if (e.has_paired()) paired_after_ = absl::Now() - start_;
        changed_.notify_all();
      }
      status_ = reader_->Finish();
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
      changed_.notify_all();
    });
  }
  ~Pairer() {
    context_.TryCancel();
    thread_.join();
  }
  bool Wait(const std::function<bool(const std::vector<v1::PairEvent>&)>& ready,
            absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] {
      return ready(events_) || done_;
    }) && ready(events_);
  }
  std::optional<v1::PairFound> Paired() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const v1::PairEvent& e : events_) {
      if (e.has_paired()) return e.paired();
    }
    return std::nullopt;
  }
  absl::Duration paired_after() {
    std::lock_guard<std::mutex> lock(mu_);
    return paired_after_;
  }
  void Leave() { context_.TryCancel(); }
  // The stream's end status once it has ended, or nothing within the timeout.
  std::optional<grpc::Status> Ended(absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] { return done_; })) {
      return std::nullopt;
    }
    return status_;
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::PairEvent>> reader_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<v1::PairEvent> events_;
  grpc::Status status_;
  absl::Time start_;
  absl::Duration paired_after_;
  bool done_ = false;
};

TEST_F(PlayersTest, PairStreamsCountAgainstTheAddresssStreamCap) {
  // One address holding many player keys must not hold more open streams than --client_streams
  // allows: each Pair stream stays open while its player waits, polling the database.
  lobby_.reset();
  StartLobby({"--client_streams=2"});
  const std::string a = Register("alice"), b = Register("bob"), c = Register("carol");
  // Different games, so that nobody is paired and every stream stays open.
  Pairer first(stub_.get(), a, "tictactoe");
  Pairer second(stub_.get(), b, "connect4");
  EXPECT_FALSE(first.Ended(absl::Milliseconds(500)).has_value());
  EXPECT_FALSE(second.Ended(absl::Milliseconds(100)).has_value());
  Pairer third(stub_.get(), c, "reversi");
  std::optional<grpc::Status> refused = third.Ended(absl::Seconds(5));
  ASSERT_TRUE(refused.has_value()) << "a third stream from the address is still open";
  EXPECT_EQ(refused->error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused->error_message();
  // Closing one frees its place.
  first.Leave();
  ASSERT_TRUE(first.Ended(absl::Seconds(5)).has_value());
  absl::SleepFor(absl::Milliseconds(300));
  Pairer again(stub_.get(), c, "reversi");
  EXPECT_FALSE(again.Ended(absl::Milliseconds(500)).has_value());
}

bool HasPairing(const std::vector<v1::PairEvent>& events) {
  return std::any_of(events.begin(), events.end(),
                     [](const v1::PairEvent& e) { return e.has_paired(); });
}

TEST_F(PlayersTest, TwoPlayersArePairedIntoOneMatchWithinSeconds) {
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  Pairer a(stub_.get(), alice, "connect4");
  Pairer b(stub_.get(), bob, "connect4");
  ASSERT_TRUE(a.Wait(HasPairing, absl::Seconds(5)));
  ASSERT_TRUE(b.Wait(HasPairing, absl::Seconds(5)));
  const v1::PairFound pa = *a.Paired();
  const v1::PairFound pb = *b.Paired();
  EXPECT_EQ(pa.match_id(), pb.match_id());
  EXPECT_NE(pa.seat(), pb.seat());
  EXPECT_EQ(pa.opponent(), "bob");
  EXPECT_EQ(pb.opponent(), "alice");
  // The tokens hold the seats: the first player moves.
  const v1::PairFound& first = pa.seat() == 0 ? pa : pb;
  EXPECT_TRUE(Move(stub_.get(), pa.match_id(), 0, "4", first.seat_token()).ok());
  absl::StatusOr<v1::Match> m = GetMatch(stub_.get(), pa.match_id());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->status(), v1::MATCH_STATUS_ACTIVE);
  EXPECT_EQ(m->seats(0).player().empty(), false);
}

TEST_F(PlayersTest, ALonePlayerIsOfferedTheNearestBotAndLeavingTheQueueIsAtOnce) {
  lobby_.reset();
  StartLobby({"--pair_bot_after_s=1"});
  const std::string alice = Register("alice");
  {
    Pairer a(stub_.get(), alice, "tictactoe");
    ASSERT_TRUE(a.Wait(
        [](const std::vector<v1::PairEvent>& events) {
          return std::any_of(events.begin(), events.end(),
                             [](const v1::PairEvent& e) { return e.has_bot_offer(); });
        },
        absl::Seconds(5)));
    a.Leave();
  }
  std::string left;
  for (int i = 0; i < 50 && (left = Sql("SELECT count(*) FROM pairing_queue")) != "0"; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(left, "0") << "the entry leaves with the stream";
  // Guests cannot queue.
  grpc::ClientContext context;
  v1::PairRequest request;
  request.mutable_spec()->set_name("tictactoe");
  auto reader = stub_->Pair(&context, request);
  v1::PairEvent e;
  EXPECT_FALSE(reader->Read(&e));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(PlayersTest, QueueingAgainFromAnotherConnectionTakesThePlaceOver) {
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  Pairer first(stub_.get(), alice, "connect4");
  absl::SleepFor(absl::Milliseconds(300));  // queued and ticking
  ASSERT_FALSE(first.Ended(absl::ZeroDuration()).has_value());
  Pairer second(stub_.get(), alice, "connect4");
  // The first stream ends, told why; the second is the one paired.
  std::optional<grpc::Status> ended = first.Ended(absl::Seconds(5));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->error_code(), grpc::StatusCode::ABORTED) << ended->error_message();
  EXPECT_NE(ended->error_message().find("another connection"), std::string::npos);
  Pairer b(stub_.get(), bob, "connect4");
  ASSERT_TRUE(second.Wait(HasPairing, absl::Seconds(5)));
  ASSERT_TRUE(b.Wait(HasPairing, absl::Seconds(5)));
  EXPECT_EQ(second.Paired()->match_id(), b.Paired()->match_id());
  EXPECT_FALSE(first.Paired().has_value());
}

TEST_F(PlayersTest, TwoHundredJoinsOverTwoInstancesPairEveryoneExactlyOnce) {
  // A second instance on the same database: half the players queue through it.
  auto second = ServerProcess::Start(
      PLY_LOBBY_BINARY, {"--port=0", "--host=127.0.0.1", absl::StrCat("--database_url=", url_),
                         "--bot_pacing_ms=0", "--client_limit_exempt=127.0.0.1"});
  ASSERT_TRUE(second.ok()) << second.status();
  auto other = v1::LobbyService::NewStub((*second)->channel());
  lobby_.reset();
  StartLobby({"--client_limit_exempt=127.0.0.1"});
  constexpr int kPlayers = 200;
  std::vector<std::string> keys;
  for (int i = 0; i < kPlayers; ++i) keys.push_back(Register(absl::StrCat("p", i)));
  std::vector<std::unique_ptr<Pairer>> pairers;
  for (int i = 0; i < kPlayers; ++i) {
    pairers.push_back(
        std::make_unique<Pairer>(i % 2 ? other.get() : stub_.get(), keys[i], "connect4"));
  }
  std::map<int64_t, int> seats_per_match;
  std::vector<double> waited_ms;
  for (auto& p : pairers) {
    ASSERT_TRUE(p->Wait(HasPairing, absl::Seconds(30)));
    ++seats_per_match[p->Paired()->match_id()];
    waited_ms.push_back(absl::ToDoubleMilliseconds(p->paired_after()));
  }
  EXPECT_EQ(seats_per_match.size(), static_cast<size_t>(kPlayers / 2));
  for (const auto& [id, seats] : seats_per_match) EXPECT_EQ(seats, 2) << "match " << id;
  std::sort(waited_ms.begin(), waited_ms.end());
  std::printf("pairing 200 joins over 2 instances: p50 %.0f ms, p99 %.0f ms, max %.0f ms\n",
              waited_ms[kPlayers / 2], waited_ms[kPlayers * 99 / 100], waited_ms.back());
}

TEST_F(PlayersTest, ACrashedInstancesQueueEntryIsPairedWithNobodyAndHoldsNoToken) {
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  auto second = ServerProcess::Start(
      PLY_LOBBY_BINARY,
      {"--port=0", "--host=127.0.0.1", absl::StrCat("--database_url=", url_), "--bot_pacing_ms=0"});
  ASSERT_TRUE(second.ok()) << second.status();
  auto other = v1::LobbyService::NewStub((*second)->channel());
  {
    // Alice waits through the second instance, which then dies with her stream open.
    Pairer waiting(other.get(), alice, "connect4");
    ASSERT_TRUE(waiting.Wait(
        [](const std::vector<v1::PairEvent>& e) { return !e.empty() && e[0].has_waiting(); },
        absl::Seconds(5)));
    // The row holds the hash of a seat token, never a token.
    EXPECT_EQ(Sql("SELECT length(token_hash) FROM pairing_queue"), "64");
    EXPECT_EQ(Sql("SELECT count(*) FROM information_schema.columns WHERE"
                  " table_name = 'pairing_queue' AND column_name LIKE '%token'"),
              "0");
    (*second)->Signal(SIGKILL);
    ASSERT_TRUE(waiting.Ended(absl::Seconds(10)).has_value());
  }
  // Past the entry's lifetime (5 s unrefreshed), bob queues here: he is not paired into a match
  // with nobody at the other seat, and the dead entry is gone.
  absl::SleepFor(absl::Seconds(5.5));
  Pairer b(stub_.get(), bob, "connect4");
  EXPECT_FALSE(b.Wait(HasPairing, absl::Seconds(2))) << "paired with a dead entry";
  EXPECT_EQ(Sql("SELECT count(*) FROM pairing_queue WHERE player_id ="
                " (SELECT id FROM players WHERE name = 'alice')"),
            "0");
  EXPECT_EQ(Sql("SELECT count(*) FROM matches"), "0");
  // Alice comes back through the live instance and is queued (not "paired a moment ago"),
  // and the two are paired.
  Pairer a(stub_.get(), alice, "connect4");
  ASSERT_TRUE(a.Wait(HasPairing, absl::Seconds(5)));
  ASSERT_TRUE(b.Wait(HasPairing, absl::Seconds(5)));
  EXPECT_EQ(a.Paired()->match_id(), b.Paired()->match_id());
  // Each stream's own token plays its seat.
  const std::string token =
      a.Paired()->seat() == 0 ? a.Paired()->seat_token() : b.Paired()->seat_token();
  grpc::Status moved = Move(stub_.get(), a.Paired()->match_id(), 0, "4", token);
  EXPECT_TRUE(moved.ok()) << moved.error_message();
}

}  // namespace
}  // namespace ply
