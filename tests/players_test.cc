// Players end to end: registering and logging in again with the player key, names unique
// ignoring case, a rated game moving both ratings by the Glicko-2 formulas in the transaction
// that ends it, one player never on both seats of a rated match, quotas per player, a guest
// making a match casual. Real PostgreSQL, ply-bot and ply-lobby processes.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lobby-server/names.h"
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
using ::ply::testing::GetMatch;
using ::ply::testing::JoinAsPlayer;
using ::ply::testing::Login;
using ::ply::testing::Move;
using ::ply::testing::PlayersTest;
using ::ply::testing::Resign;

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
  ::ply::testing::Watch watcher(stub_.get(), id);
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
  // The watchers' game-over event says so too: the final screen showed no change before.
  ASSERT_TRUE(watcher.WaitFor(
      [](const auto& events) { return !events.empty() && events.back().has_game_over(); },
      absl::Seconds(10)));
  const v1::GameOver over = watcher.events().back().game_over();
  ASSERT_EQ(over.ratings_after_size(), 2);
  EXPECT_EQ(over.ratings_after(0), after->seats(0).rating_after());
  EXPECT_EQ(over.ratings_after(1), after->seats(1).rating_after());
  const v1::Player a = Whois("alice");
  ASSERT_EQ(a.ratings_size(), 1);
  EXPECT_EQ(a.ratings(0).game(), "connect4");
  EXPECT_EQ(a.ratings(0).rating(), static_cast<int>(std::lround(won.rating)));
  EXPECT_EQ(a.ratings(0).deviation(), static_cast<int>(std::lround(won.deviation)));
  EXPECT_EQ(a.ratings(0).games(), 1);
  EXPECT_EQ(a.ratings(0).wins(), 1);
  EXPECT_TRUE(a.ratings(0).provisional());
  EXPECT_EQ(Whois("bob").ratings(0).losses(), 1);
  // A resignation is rated too, once each side has moved; the next game starts from the new
  // ratings.
  auto [second, t2] = PlayerMatch("connect4", bob, alice);
  EXPECT_EQ(GetMatch(stub_.get(), second)->seats(0).rating(),
            static_cast<int>(std::lround(lost.rating)));
  ASSERT_TRUE(Move(stub_.get(), second, 0, "4", t2[0]).ok());
  ASSERT_TRUE(Move(stub_.get(), second, 1, "4", t2[1]).ok());
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
  // Lists say what the match's own page says: rated, and each new rating still provisional
  // (every list showed it settled).
  EXPECT_TRUE(list.matches(1).rated());
  EXPECT_TRUE(list.matches(1).seats(0).provisional());
  EXPECT_TRUE(list.matches(1).seats(1).provisional());
  EXPECT_EQ(list.matches(1).seats(0).provisional(),
            GetMatch(stub_.get(), id)->seats(0).provisional());
}

TEST_F(PlayersTest, ResignationsBeforeEachSideMovedAndAPairsGamesPastTheDaysBoundAreNotRated) {
  // Win trading: a second account joins the farmer's rated match and resigns at once (the
  // farmer went 1500 -> 1964 in 60 games, 1.3 s), or after a move each.
  const std::string farmer = Register("farmer");
  const std::string alt = Register("alt");
  for (int plies : {0, 1}) {
    auto [id, tokens] = PlayerMatch("connect4", farmer, alt);
    for (int ply = 0; ply < plies; ++ply) {
      ASSERT_TRUE(Move(stub_.get(), id, ply, "4", tokens[ply % 2]).ok());
    }
    ASSERT_TRUE(Resign(stub_.get(), id, tokens[1]).ok());
    absl::StatusOr<v1::Match> over = GetMatch(stub_.get(), id);
    ASSERT_TRUE(over.ok());
    EXPECT_EQ(over->status(), v1::MATCH_STATUS_FINISHED);
    EXPECT_EQ(over->seats(0).rating_after(), 0) << plies << " moves";
  }
  EXPECT_EQ(Whois("farmer").ratings_size(), 0) << "no game has moved a rating yet";
  // After a move each, a resignation counts: the pair's first games of the day are rated, the
  // rest are played and recorded but move no rating.
  int rating = 1500;
  for (int game = 0; game < ::ply::lobby::kRatedGamesPerPairPerDay + 2; ++game) {
    auto [id, tokens] = PlayerMatch("connect4", farmer, alt);
    ASSERT_TRUE(Move(stub_.get(), id, 0, "4", tokens[0]).ok());
    ASSERT_TRUE(Move(stub_.get(), id, 1, "4", tokens[1]).ok());
    v1::Match answer;
    ASSERT_TRUE(Resign(stub_.get(), id, tokens[1], &answer).ok());
    absl::StatusOr<v1::Match> over = GetMatch(stub_.get(), id);
    ASSERT_TRUE(over.ok());
    // The resignation's own answer says what the match says (it said rating_after 0 when
    // nobody watched the match).
    EXPECT_EQ(answer.seats(0).rating_after(), over->seats(0).rating_after()) << "game " << game;
    EXPECT_EQ(answer.seats(1).rating_after(), over->seats(1).rating_after()) << "game " << game;
    EXPECT_EQ(answer.result().rating_note(), over->result().rating_note()) << "game " << game;
    if (game < ::ply::lobby::kRatedGamesPerPairPerDay) {
      EXPECT_GT(over->seats(0).rating_after(), rating) << "game " << game;
      EXPECT_EQ(over->result().rating_note(), "");
      rating = over->seats(0).rating_after();
    } else {
      EXPECT_EQ(over->seats(0).rating_after(), 0) << "game " << game;
      // The final screen says why (it said nothing).
      EXPECT_EQ(over->result().rating_note(), ::ply::lobby::PairBoundNote()) << "game " << game;
    }
  }
  const v1::Player f = Whois("farmer");
  ASSERT_EQ(f.ratings_size(), 1);
  EXPECT_EQ(f.ratings(0).games(), ::ply::lobby::kRatedGamesPerPairPerDay);
  EXPECT_EQ(f.ratings(0).rating(), rating);
}

TEST_F(PlayersTest, APairsGamesLeftOpenForADayCountWhenTheyEndNotWhenTheyBegan) {
  // The day's bound counted the pair's games by when each match was created: a pair that
  // opened seven rated matches, moved once each and ended them a day later had all seven
  // rated (and none counted against the day's other games).
  const std::string farmer = Register("farmer");
  const std::string alt = Register("alt");
  std::vector<::ply::testing::HumanSeats> open;
  for (int game = 0; game < ::ply::lobby::kRatedGamesPerPairPerDay + 2; ++game) {
    const ::ply::testing::HumanSeats m = PlayerMatch("connect4", farmer, alt);
    ASSERT_TRUE(Move(stub_.get(), m.id, 0, "4", m.tokens[0]).ok());
    ASSERT_TRUE(Move(stub_.get(), m.id, 1, "4", m.tokens[1]).ok());
    open.push_back(m);
  }
  // A day passes (untimed games between people stay open while both are there).
  Sql("UPDATE matches SET created_ms = created_ms - 25 * 3600 * 1000");
  int rated = 0;
  for (const ::ply::testing::HumanSeats& m : open) {
    ASSERT_TRUE(Resign(stub_.get(), m.id, m.tokens[1]).ok());
    absl::StatusOr<v1::Match> over = GetMatch(stub_.get(), m.id);
    ASSERT_TRUE(over.ok());
    rated += over->seats(0).rating_after() > 0 ? 1 : 0;
  }
  EXPECT_EQ(rated, ::ply::lobby::kRatedGamesPerPairPerDay);
  EXPECT_EQ(Whois("farmer").ratings(0).games(), ::ply::lobby::kRatedGamesPerPairPerDay);
}

TEST_F(PlayersTest, ASeatShowsTheRatingRoundedAsTheProfileRoundsIt) {
  // Ratings of a half: the seat of the creator and the seat taken by a join both show what
  // the players' profiles show (a double rounded to even in SQL showed 1600 beside 1601).
  const std::string alice = Register("alice");
  const std::string bob = Register("bob");
  auto [first, t1] = PlayerMatch("connect4", alice, bob);
  // A move each, so that the result is rated and both players have a rating to set.
  ASSERT_TRUE(Move(stub_.get(), first, 0, "4", t1[0]).ok());
  ASSERT_TRUE(Move(stub_.get(), first, 1, "4", t1[1]).ok());
  ASSERT_TRUE(Resign(stub_.get(), first, t1[1]).ok());
  ASSERT_EQ(Whois("alice").ratings_size(), 1);
  // Each game may move the ratings: set the halves again before the next.
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
  ASSERT_TRUE(Move(stub_.get(), rated.match().id(), 0, "b2", rated.seat_token()).ok());
  ASSERT_TRUE(Move(stub_.get(), rated.match().id(), 1, "a1", joined.seat_token()).ok());
  ASSERT_TRUE(Resign(stub_.get(), rated.match().id(), joined.seat_token()).ok());
  absl::StatusOr<v1::Match> rated_end = GetMatch(stub_.get(), rated.match().id());
  ASSERT_TRUE(rated_end.ok());
  EXPECT_GT(rated_end->seats(0).rating_after(),
            std::lround(::ply::lobby::NewcomerRating("tictactoe")));
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

}  // namespace
}  // namespace ply
