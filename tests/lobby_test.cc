// ply-lobby end to end: a real PostgreSQL cluster (throwaway, started here), real ply-bot
// processes and a real ply-lobby process, talked to over gRPC on loopback. Each test gets its
// own database and its own lobby (stack_helper.h's LobbyFixture). Here: the games listed, matches
// between people played to their end, bad requests, racing moves, watchers resuming and the
// match list. Bots in matches are in lobby_bots_test.cc, crashes, outages and floods in
// lobby_resilience_test.cc, the clocks, draws by agreement and resignation in
// lobby_clock_test.cc, all on the same fixture.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/registry/registry.h"
#include "lobby-server/token.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::HasGameOver;
using ::ply::testing::MovesSeen;
using ::ply::testing::Race;
using ::ply::testing::RaceCount;
using ::ply::testing::TakingSeat;
using ::ply::testing::Watch;

using LobbyTest = ::ply::testing::LobbyFixture;

TEST_F(LobbyTest, ListsEveryGameWithLevels) {
  v1::ListGamesResponse games;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->ListGames(&context, v1::ListGamesRequest(), &games).ok());
  ASSERT_GE(games.games_size(), 7);
  for (const v1::GameInfo& g : games.games()) {
    EXPECT_GE(g.levels_size(), 3) << g.name();
    EXPECT_EQ(g.player_names_size(), 2) << g.name();
  }
}

TEST_F(LobbyTest, HumanVsHumanPlaysToAWinAndStoresOnlyTokenHashes) {
  auto [id, tokens] = HumanMatch("tictactoe");
  Watch spectator(stub_.get(), id);
  const std::vector<std::string> moves = {"a1", "b1", "a2", "b2", "a3"};
  for (size_t i = 0; i < moves.size(); ++i) {
    v1::MakeMoveResponse r;
    grpc::Status s =
        Move(id, static_cast<int>(i), moves[i], i % 2 ? tokens.second : tokens.first, &r);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(r.move().ply(), static_cast<int>(i) + 1);
  }
  v1::Match m = Get(id);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().winner(), 0);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_RULES);
  EXPECT_NE(m.result().text().find("three in a row"), std::string::npos) << m.result().text();
  EXPECT_EQ(m.moves_size(), 5);
  ASSERT_TRUE(spectator.WaitDone(absl::Seconds(10)));
  EXPECT_TRUE(spectator.status().ok()) << spectator.status().error_message();
  EXPECT_EQ(MovesSeen(spectator.events()), moves);
  EXPECT_TRUE(HasGameOver(spectator.events()));

  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", id)), "5");
  EXPECT_EQ(Sql(absl::StrCat(
                "SELECT string_agg(move, ' ' ORDER BY ply) FROM moves WHERE match_id = ", id)),
            "a1 b1 a2 b2 a3");
  // The database has the hash of each token, never the token.
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM seats WHERE token_hash = '", tokens.first, "'")),
            "0");
  EXPECT_EQ(
      Sql(absl::StrCat("SELECT token_hash FROM seats WHERE match_id = ", id, " AND seat = 0")),
      lobby::TokenHash(tokens.first));
}

TEST_F(LobbyTest, HumanVsHumanPlaysToADraw) {
  auto [id, tokens] = HumanMatch("tictactoe");
  const std::vector<std::string> moves = {"b2", "a1", "a2", "c2", "b1", "b3", "c3", "a3", "c1"};
  for (size_t i = 0; i < moves.size(); ++i) {
    ASSERT_TRUE(Move(id, static_cast<int>(i), moves[i], i % 2 ? tokens.second : tokens.first).ok());
  }
  v1::Match m = Get(id);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().winner(), -1);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_RULES);
}

TEST_F(LobbyTest, RejectsBadRequestsWithTheirCodes) {
  auto [id, tokens] = HumanMatch("tictactoe");
  auto [other, other_tokens] = HumanMatch("tictactoe");
  auto code = [](const grpc::Status& s) { return s.error_code(); };
  auto has_message = [](const grpc::Status& s) { return !s.error_message().empty(); };

  grpc::Status s = Move(id, 0, "z9", tokens.first);
  EXPECT_EQ(code(s), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(has_message(s));
  s = Move(id, 0, "a1", tokens.second);
  EXPECT_EQ(code(s), grpc::StatusCode::FAILED_PRECONDITION) << "out of turn";
  EXPECT_NE(s.error_message().find("not your turn"), std::string::npos) << s.error_message();
  s = Move(id, 3, "a1", tokens.first);
  EXPECT_EQ(code(s), grpc::StatusCode::FAILED_PRECONDITION) << "wrong ply";
  EXPECT_NE(s.error_message().find("ply"), std::string::npos) << s.error_message();
  EXPECT_EQ(code(Move(id, 0, "a1", "")), grpc::StatusCode::UNAUTHENTICATED) << "spectator";
  EXPECT_EQ(code(Move(id, 0, "a1", "not-a-token")), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(code(Move(id, 0, "a1", lobby::NewSeatToken())), grpc::StatusCode::UNAUTHENTICATED);
  s = Move(id, 0, "a1", other_tokens.first);
  EXPECT_EQ(code(s), grpc::StatusCode::PERMISSION_DENIED) << "foreign token";
  EXPECT_EQ(code(Move(987654, 0, "a1", tokens.first)), grpc::StatusCode::NOT_FOUND);
  s = Move(id, 0, std::string(2000, 'a'), tokens.first);
  EXPECT_EQ(code(s), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 200u);
  // A message over the lobby's size limit is refused by gRPC before it is parsed.
  EXPECT_EQ(code(Move(id, 0, std::string(100000, 'a'), tokens.first)),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(code(Move(-1, 0, "a1", tokens.first)), grpc::StatusCode::INVALID_ARGUMENT);

  v1::JoinMatchResponse joined;
  EXPECT_EQ(code(Join(id, 1, "mallory", &joined)), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(code(Join(id, 5, "mallory", &joined)), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Join(id, 1, "   ", &joined)), grpc::StatusCode::INVALID_ARGUMENT);

  v1::CreateMatchResponse created;
  EXPECT_EQ(code(Create("connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                        [](v1::CreateMatchRequest& r) {
                          (*r.mutable_spec()->mutable_options())["width"] = "99";
                        })),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Create("chess", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created)),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Create("connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                        [](v1::CreateMatchRequest& r) {
                          for (int i = 0; i < 100; ++i) {
                            (*r.mutable_spec()->mutable_options())[absl::StrCat("k", i)] =
                                std::string(1, 'v');
                          }
                        })),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(
      code(Create("connect4", {v1::SEAT_KIND_HUMAN, static_cast<v1::SeatKind>(77)}, {}, &created)),
      grpc::StatusCode::INVALID_ARGUMENT)
      << "unknown enum value";
  EXPECT_EQ(code(Create("connect4", {v1::SEAT_KIND_HUMAN}, {}, &created)),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(
      code(Create("connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT}, {"", "godlike"}, &created)),
      grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(
      code(Create("connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                  [](v1::CreateMatchRequest& r) { r.mutable_time_control()->set_initial_ms(-5); })),
      grpc::StatusCode::INVALID_ARGUMENT);

  // A match still waiting for its second player takes no moves.
  ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                     TakingSeat(0, "dave"))
                  .ok());
  EXPECT_EQ(code(Move(created.match().id(), 0, "a1", created.seat_token())),
            grpc::StatusCode::FAILED_PRECONDITION);

  // After the end, every move is refused.
  const std::vector<std::string> moves = {"a1", "b1", "a2", "b2", "a3"};
  for (size_t i = 0; i < moves.size(); ++i) {
    ASSERT_TRUE(Move(id, static_cast<int>(i), moves[i], i % 2 ? tokens.second : tokens.first).ok());
  }
  s = Move(id, 5, "c3", tokens.second);
  EXPECT_EQ(code(s), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("over"), std::string::npos) << s.error_message();
  // Nothing refused was stored.
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", id)), "5");
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", other)), "0");
}

TEST_F(LobbyTest, ConcurrentMovesForOnePlyStoreExactlyOne) {
  for (int round = 0; round < 10; ++round) {
    auto [id, tokens] = HumanMatch("connect4");
    // The same seat from two devices, each sending a different move for ply 0.
    const RaceCount race = Race({
        [&, id = id] { return Move(id, 0, "3", tokens.first); },
        [&, id = id] { return Move(id, 0, "5", tokens.first); },
    });
    EXPECT_EQ(race.ok, 1);
    EXPECT_EQ(race.refused, 1);
    EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", id)), "1");
    EXPECT_EQ(Get(id).moves_size(), 1);
  }
}

TEST_F(LobbyTest, WatcherResumesAfterTheLastPlyItSaw) {
  auto [id, tokens] = HumanMatch("connect4");
  const std::vector<std::string> moves = {"4", "4", "3", "5"};
  for (size_t i = 0; i < moves.size(); ++i) {
    ASSERT_TRUE(Move(id, static_cast<int>(i), moves[i], i % 2 ? tokens.second : tokens.first).ok());
  }
  Watch w(stub_.get(), id, /*after_ply=*/2);
  ASSERT_TRUE(w.WaitFor([](const auto& e) { return !e.empty() && e.back().has_resync(); },
                        absl::Seconds(5)));
  std::vector<v1::MatchEvent> events = w.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].move_applied().move().ply(), 3);
  EXPECT_EQ(events[0].move_applied().move().move(), "3");
  EXPECT_EQ(events[1].move_applied().move().ply(), 4);
  EXPECT_EQ(events[2].resync().moves_size(), 4);
  // Then live events.
  ASSERT_TRUE(Move(id, 4, "2", tokens.first).ok());
  ASSERT_TRUE(w.WaitFor([](const auto& e) { return e.size() == 4; }, absl::Seconds(5)));
  EXPECT_EQ(w.events()[3].move_applied().move().move(), "2");

  Watch bad(stub_.get(), id, /*after_ply=*/99);
  ASSERT_TRUE(bad.WaitDone(absl::Seconds(5)));
  EXPECT_EQ(bad.status().error_code(), grpc::StatusCode::OUT_OF_RANGE);
  Watch missing(stub_.get(), 424242);
  ASSERT_TRUE(missing.WaitDone(absl::Seconds(5)));
  EXPECT_EQ(missing.status().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(LobbyTest, ListsMatchesWithFiltersAndPages) {
  v1::CreateMatchResponse created;
  for (int i = 0; i < 5; ++i) {
    // The last one timed: its open seats' list says the clock.
    ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                       [i](v1::CreateMatchRequest& r) {
                         if (i < 4) return;
                         r.mutable_time_control()->set_initial_ms(540);
                         r.mutable_time_control()->set_increment_ms(2000);
                       })
                    .ok());
  }
  ASSERT_TRUE(
      Create("connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"beginner", "beginner"}, &created)
          .ok());
  auto list = [&](std::function<void(v1::ListMatchesRequest&)> f) {
    v1::ListMatchesRequest r;
    f(r);
    grpc::ClientContext c;
    v1::ListMatchesResponse out;
    EXPECT_TRUE(stub_->ListMatches(&c, r, &out).ok());
    return out;
  };
  v1::ListMatchesResponse open = list([](auto& r) { r.set_open_seats(true); });
  ASSERT_EQ(open.matches_size(), 5);
  // Newest first: the timed one.
  ASSERT_TRUE(open.matches(0).has_time_control());
  EXPECT_EQ(open.matches(0).time_control().initial_ms(), 540);
  EXPECT_EQ(open.matches(0).time_control().increment_ms(), 2000);
  EXPECT_FALSE(open.matches(1).has_time_control());
  v1::ListMatchesResponse bots = list([](auto& r) { r.set_bots_only(true); });
  ASSERT_EQ(bots.matches_size(), 1);
  EXPECT_EQ(bots.matches(0).spec().name(), "connect4");
  v1::ListMatchesResponse page1 = list([](auto& r) {
    r.set_game("tictactoe");
    r.set_page_size(3);
  });
  ASSERT_EQ(page1.matches_size(), 3);
  ASSERT_FALSE(page1.next_page_token().empty());
  v1::ListMatchesResponse page2 = list([&](auto& r) {
    r.set_game("tictactoe");
    r.set_page_size(3);
    r.set_page_token(page1.next_page_token());
  });
  ASSERT_EQ(page2.matches_size(), 2);
  EXPECT_LT(page2.matches(0).id(), page1.matches(2).id());
  EXPECT_EQ(list([](auto& r) { r.set_status(v1::MATCH_STATUS_WAITING); }).matches_size(), 5);
}

}  // namespace
}  // namespace ply
