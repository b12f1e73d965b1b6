// What the lobby's end-to-end tests of players share: registering and logging in, a player's
// profile, a match between two players (or guests) with both seats taken, and one against a bot.
#ifndef PLY_TESTS_PLAYERS_HELPER_H_
#define PLY_TESTS_PLAYERS_HELPER_H_

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"

namespace ply::testing {

// Login without a key (registering `name`) or with one (logging in again).
inline grpc::Status Login(v1::LobbyService::Stub* stub, const std::string& name,
                          const std::string& key, v1::LoginResponse* out) {
  v1::LoginRequest request;
  request.set_name(name);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  if (!key.empty()) context.AddMetadata("x-ply-player", key);
  return stub->Login(&context, request, out);
}

// Registers `name`: its player key. A failed call fails the test.
inline std::string Register(v1::LobbyService::Stub* stub, const std::string& name) {
  v1::LoginResponse response;
  grpc::Status s = Login(stub, name, "", &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return response.player_key();
}

// GetPlayer; a failed call fails the test.
inline v1::Player GetPlayer(v1::LobbyService::Stub* stub, const std::string& name) {
  v1::GetPlayerRequest request;
  request.set_name(name);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::Player player;
  grpc::Status s = stub->GetPlayer(&context, request, &player);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return player;
}

// A match of `game` between two people, started: seat 0 taken at creation with the player key
// `key0`, seat 1 joined with `key1` (an empty key: a guest, named by the create request's
// display name or `joiner_name`). `more` edits the create request. A failed call fails the test.
inline HumanSeats PlayersMatch(v1::LobbyService::Stub* stub, const std::string& game,
                               const std::string& key0, const std::string& key1,
                               const std::function<void(v1::CreateMatchRequest&)>& more = nullptr,
                               const std::string& joiner_name = "") {
  v1::CreateMatchRequest create;
  create.mutable_spec()->set_name(game);
  create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  create.set_take_seat(0);
  if (more) more(create);
  v1::CreateMatchResponse created;
  {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    if (!key0.empty()) context.AddMetadata("x-ply-player", key0);
    grpc::Status s = stub->CreateMatch(&context, create, &created);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  v1::JoinMatchRequest join;
  join.set_match_id(created.match().id());
  join.set_seat(1);
  if (!joiner_name.empty()) join.set_display_name(joiner_name);
  v1::JoinMatchResponse joined;
  {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    if (!key1.empty()) context.AddMetadata("x-ply-player", key1);
    grpc::Status s = stub->JoinMatch(&context, join, &joined);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_EQ(joined.match().status(), v1::MATCH_STATUS_ACTIVE);
  HumanSeats seats;
  seats.id = created.match().id();
  seats.tokens[0] = created.seat_token();
  seats.tokens[1] = joined.seat_token();
  return seats;
}

// Joins seat `seat` of match `id` as the player `key` (a guest named "guest" for "").
inline grpc::Status JoinAsPlayer(v1::LobbyService::Stub* stub, int64_t id, int seat,
                                 const std::string& key, v1::JoinMatchResponse* out) {
  v1::JoinMatchRequest join;
  join.set_match_id(id);
  join.set_seat(seat);
  if (key.empty()) join.set_display_name("guest");
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  if (!key.empty()) context.AddMetadata("x-ply-player", key);
  return stub->JoinMatch(&context, join, out);
}

// Creates a match of `game` with the player `key` at seat 0 and a bot of `level` at seat 1;
// `more` edits the request.
inline grpc::Status PlayerAgainstBot(
    v1::LobbyService::Stub* stub, const std::string& game, const std::string& key,
    const std::string& level, v1::CreateMatchResponse* out,
    const std::function<void(v1::CreateMatchRequest&)>& more = nullptr) {
  v1::CreateMatchRequest create;
  create.mutable_spec()->set_name(game);
  create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  v1::SeatSpec* bot = create.add_seats();
  bot->set_kind(v1::SEAT_KIND_BOT);
  bot->set_difficulty(level);
  create.set_take_seat(0);
  if (more) more(create);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  context.AddMetadata("x-ply-player", key);
  return stub->CreateMatch(&context, create, out);
}

// Plays `move` with the person's seat `token` at `ply` of match `id` and waits for the bot's
// reply: a result after that counts for the ratings (one before each side moved does not).
inline void MoveAndAwaitTheBot(v1::LobbyService::Stub* stub, int64_t id, int ply,
                               const std::string& move, const std::string& token) {
  grpc::Status s = Move(stub, id, ply, move, token);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const v1::Match m = WaitMatch(
      stub, id, [ply](const v1::Match& m) { return m.moves_size() >= ply + 2; }, absl::Seconds(20));
  ASSERT_GE(m.moves_size(), ply + 2) << "the bot did not reply";
}

}  // namespace ply::testing

#endif  // PLY_TESTS_PLAYERS_HELPER_H_
