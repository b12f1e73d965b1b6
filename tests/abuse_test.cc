// What one client may hold, end to end: a client that asks for many bot-vs-bot matches of
// `perfect` bots gets its quota and no more, and a person's bot still moves on time meanwhile;
// a client that opens matches nobody joins is refused past its quota, and those matches expire.
// Real PostgreSQL, ply-bot and ply-lobby processes; the test's IPv4 and IPv6 calls are two
// clients.
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ply/v1/bot.grpc.pb.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/bot_helper.h"
#include "tests/lobby_helper.h"
#include "tests/players_helper.h"
#include "tests/raw_http.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::Create;
using ::ply::testing::GetMatch;
using ::ply::testing::Join;
using ::ply::testing::LobbyInstance;
using ::ply::testing::Move;
using ::ply::testing::MovesSeen;
using ::ply::testing::OfferRematch;
using ::ply::testing::RawConnection;
using ::ply::testing::Resign;
using ::ply::testing::ServerProcess;
using ::ply::testing::StartBot;
using ::ply::testing::TakingSeat;
using ::ply::testing::Watch;

// Whether `channel`, connected now, goes back to idle (the server closed its connection)
// within `wait`.
bool WentIdle(grpc::Channel& channel, absl::Duration wait) {
  const absl::Time end = absl::Now() + wait;
  grpc_connectivity_state state = channel.GetState(false);
  while (state != GRPC_CHANNEL_IDLE) {
    if (absl::Now() >= end) return false;
    channel.WaitForStateChange(state, absl::ToChronoTime(end));
    state = channel.GetState(false);
  }
  return true;
}

// Whether ply-bot answers a ListGames call on `channel` within 10 s.
bool ListGamesAnswers(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = v1::BotService::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::ListGamesResponse games;
  const grpc::Status s = stub->ListGames(&context, v1::ListGamesRequest(), &games);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return s.ok();
}

class AbuseTest : public ::ply::testing::StackFixture {
 protected:
  void SetUp() override { UseNewDatabase("abuse"); }

  // A lobby listening on both stacks, so that 127.0.0.1 (the instance's own stub) and ::1 are
  // two clients.
  void Start(const std::vector<std::string>& flags, const std::string& bot_target) {
    std::vector<std::string> args = {"--host=[::]", bot_target};
    args.insert(args.end(), flags.begin(), flags.end());
    LobbyInstance lobby = StartLobbyInstance(args);
    ASSERT_NE(lobby.process, nullptr);
    lobby_ = std::move(lobby.process);
    v4_ = std::move(lobby.stub);
    v6_ = v1::LobbyService::NewStub(grpc::CreateChannel(absl::StrCat("[::1]:", lobby_->port()),
                                                        grpc::InsecureChannelCredentials()));
  }

  std::unique_ptr<v1::LobbyService::Stub> v4_, v6_;
};

TEST_F(AbuseTest, BotVsBotFloodGetsItsQuotaAndAPersonsBotStillMovesOnTime) {
  // One bot instance with two workers, one of them kept for people's bots.
  auto bot = ServerProcess::Start(PLY_BOT_BINARY,
                                  {"--port=0", "--host=127.0.0.1", "--workers=2", "--queue=4",
                                   "--reserved_workers=1", "--tt_mb=4", "--log_level=error"});
  ASSERT_TRUE(bot.ok()) << bot.status();
  Start({"--bot_pacing_ms=0", "--client_bot_matches=2", "--bot_vs_bot_min_pacing_ms=250"},
        absl::StrCat("--bot_target=", (*bot)->address()));
  // The flooder asks for ten matches of perfect bots that move as fast as they can.
  int accepted = 0, refused = 0;
  std::vector<int64_t> flood;
  for (int i = 0; i < 10; ++i) {
    v1::CreateMatchResponse created;
    grpc::Status s = Create(v4_.get(), "connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT},
                            {"perfect", "perfect"}, &created,
                            [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(0); });
    if (s.ok()) {
      ++accepted;
      flood.push_back(created.match().id());
      // Watching is for people: the bots wait at least the minimum pacing.
      EXPECT_EQ(created.match().bot_pacing_ms(), 250);
    } else {
      ++refused;
      EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      EXPECT_NE(s.error_message().find("bot-vs-bot"), std::string::npos) << s.error_message();
    }
  }
  EXPECT_EQ(accepted, 2);
  EXPECT_EQ(refused, 8);
  // The flood is running (its bots search a second a move, on the worker people do not keep).
  for (int64_t f : flood) {
    absl::StatusOr<v1::Match> m = GetMatch(v4_.get(), f);
    for (const absl::Time give_up = absl::Now() + absl::Seconds(15);
         m.ok() && m->moves_size() == 0 && absl::Now() < give_up;) {
      absl::SleepFor(absl::Milliseconds(50));
      m = GetMatch(v4_.get(), f);
    }
    ASSERT_TRUE(m.ok());
    ASSERT_GT(m->moves_size(), 0);
  }
  // A person plays a beginner bot meanwhile: each bot reply within its budget (100 ms) plus one
  // second of the person's move being acknowledged.
  v1::CreateMatchResponse mine;
  ASSERT_TRUE(Create(v6_.get(), "connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT},
                     {"", "beginner"}, &mine,
                     [](v1::CreateMatchRequest& r) {
                       r.set_take_seat(0);
                       r.set_display_name("person");
                       r.set_bot_pacing_ms(0);
                     })
                  .ok());
  const int64_t id = mine.match().id();
  for (int ply = 0; ply < 8; ply += 2) {
    absl::StatusOr<v1::Match> m = GetMatch(v6_.get(), id);
    ASSERT_TRUE(m.ok());
    if (m->status() != v1::MATCH_STATUS_ACTIVE) break;
    ASSERT_TRUE(Move(v6_.get(), id, ply, m->legal_moves(0), mine.seat_token()).ok());
    const absl::Time moved = absl::Now();
    absl::StatusOr<v1::Match> after = GetMatch(v6_.get(), id);
    while (after.ok() && after->moves_size() == ply + 1 &&
           after->status() == v1::MATCH_STATUS_ACTIVE && absl::Now() - moved < absl::Seconds(5)) {
      absl::SleepFor(absl::Milliseconds(10));
      after = GetMatch(v6_.get(), id);
    }
    ASSERT_TRUE(after.ok());
    if (after->status() != v1::MATCH_STATUS_ACTIVE) break;
    EXPECT_LT(absl::Now() - moved, absl::Milliseconds(1100)) << "the bot's reply at ply " << ply;
  }
}

TEST_F(AbuseTest, OpenMatchesArePerClientAndExpireWhenNobodyJoins) {
  Start({"--client_waiting_matches=3", "--waiting_expiry_s=2"}, "--bot_target=");
  std::vector<int64_t> open;
  auto open_one = [&](v1::LobbyService::Stub* stub) {
    v1::CreateMatchResponse created;
    grpc::Status s = Create(stub, "tictactoe", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {},
                            &created, TakingSeat(0, "opener"));
    if (s.ok()) open.push_back(created.match().id());
    return s;
  };
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(open_one(v4_.get()).ok());
  grpc::Status fourth = open_one(v4_.get());
  EXPECT_EQ(fourth.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(fourth.error_message().find("waiting for players"), std::string::npos);
  // Another client is not held back by the first one's quota.
  ASSERT_TRUE(open_one(v6_.get()).ok());
  // Nobody joins: within the expiry (and the sweep after it) they are cancelled, with no result,
  // and a watcher is told.
  Watch watcher(v6_.get(), open.front());
  ASSERT_TRUE(watcher.WaitDone(absl::Seconds(10)));
  ASSERT_FALSE(watcher.events().empty());
  EXPECT_TRUE(watcher.events().back().has_game_over());
  EXPECT_EQ(watcher.events().back().game_over().result().reason(), v1::END_REASON_CANCELLED);
  for (int64_t id : open) {
    // Each goes within a sweep (a tenth of the expiry) of its own time.
    absl::StatusOr<v1::Match> m = GetMatch(v6_.get(), id);
    for (const absl::Time give_up = absl::Now() + absl::Seconds(5);
         m.ok() && m->status() == v1::MATCH_STATUS_WAITING && absl::Now() < give_up;) {
      absl::SleepFor(absl::Milliseconds(50));
      m = GetMatch(v6_.get(), id);
    }
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->status(), v1::MATCH_STATUS_FINISHED);
    EXPECT_EQ(m->result().reason(), v1::END_REASON_CANCELLED);
    EXPECT_EQ(m->result().winner(), -1);
  }
  // Their quota is free again.
  EXPECT_TRUE(open_one(v4_.get()).ok());
}

TEST_F(AbuseTest, MatchesCreatedAndJoinedAtOnceCountAgainstTheCreatorsOpenMatches) {
  // The lock-table attack: one address created a timed match, joined it at once (so it was
  // never waiting) and played on, 10,942 times in 192 s. Each match in play held its owner's
  // advisory lock until PostgreSQL's shared lock table was full and every create failed.
  Start({"--client_open_matches=3", "--address_quota_multiple=2"}, "--bot_target=");
  auto create_and_join = [&](v1::LobbyService::Stub* stub, const std::string& name) {
    v1::CreateMatchResponse created;
    grpc::Status s = Create(stub, "tictactoe", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {},
                            &created, [&](v1::CreateMatchRequest& r) {
                              r.set_take_seat(0);
                              r.set_display_name(name);
                              r.mutable_time_control()->set_initial_ms(86'400'000);
                            });
    if (!s.ok()) return s;
    v1::JoinMatchResponse joined;
    grpc::Status j = ::ply::testing::Join(stub, created.match().id(), 1, name + "-too", &joined);
    EXPECT_TRUE(j.ok()) << j.error_message();
    EXPECT_EQ(joined.match().status(), v1::MATCH_STATUS_ACTIVE);
    return s;
  };
  // A guest counts by address: 3 of its own, then refused.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(create_and_join(v4_.get(), "g").ok()) << i;
  grpc::Status fourth = create_and_join(v4_.get(), "g");
  EXPECT_EQ(fourth.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(fourth.error_message().find("matches waiting or in play"), std::string::npos)
      << fourth.error_message();
  // Fresh accounts from that address share its bound (twice a client's: 6).
  const std::string a = ::ply::testing::Register(v4_.get(), "fresh-a");
  v1::CreateMatchResponse created;
  const auto by_player = [&](const std::string& key) {
    v1::CreateMatchRequest create;
    create.mutable_spec()->set_name("tictactoe");
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.set_take_seat(0);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    context.AddMetadata("x-ply-player", key);
    return v4_->CreateMatch(&context, create, &created);
  };
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(by_player(a).ok()) << i;
  grpc::Status own = by_player(a);
  EXPECT_EQ(own.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << own.error_message();
  const std::string b = ::ply::testing::Register(v4_.get(), "fresh-b");
  grpc::Status past = by_player(b);
  EXPECT_EQ(past.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << past.error_message();
  EXPECT_NE(past.error_message().find("your address"), std::string::npos) << past.error_message();
  // Another address is not held back.
  EXPECT_TRUE(create_and_join(v6_.get(), "h").ok());
}

TEST_F(AbuseTest, ConnectionsWithNoCallAreClosedOnceIdleButStreamsAndReturningClientsGoOn) {
  // Connections opened and never used held memory and a file descriptor each until their age
  // ran out (5,000 of them took ply-lobby from 27 MB to 125 MB for two minutes).
  Start({"--max_connection_idle_ms=1000"}, "--bot_target=");
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(v4_.get(), "tictactoe", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {},
                     &created, TakingSeat(0, "alice"))
                  .ok());
  const int64_t id = created.match().id();
  v1::JoinMatchResponse joined;
  ASSERT_TRUE(Join(v6_.get(), id, 1, "bob", &joined).ok());
  // A watcher's stream is a call in progress: its connection is not idle however quiet it is.
  Watch watcher(v6_.get(), id);
  RawConnection silent(lobby_->port());
  RawConnection preface_only(lobby_->port());
  ASSERT_TRUE(silent.connected() && preface_only.connected());
  // HTTP/2's client preface and an empty SETTINGS frame, and then nothing.
  ASSERT_TRUE(preface_only.SendHttp2Preface());
  EXPECT_TRUE(silent.ClosedWithin(absl::Seconds(10)));
  EXPECT_TRUE(preface_only.ClosedWithin(absl::Seconds(10)));
  // A client of its own that made one call and then waited: its connection was closed too
  // (its channel went back to idle), and its next call reconnects and lands; the watcher,
  // still there, sees the move.
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", lobby_->port()),
                                     grpc::InsecureChannelCredentials());
  auto creator = v1::LobbyService::NewStub(channel);
  ASSERT_TRUE(GetMatch(creator.get(), id).ok());
  EXPECT_TRUE(WentIdle(*channel, absl::Seconds(10)));
  const grpc::Status moved = Move(creator.get(), id, 0, "b2", created.seat_token());
  EXPECT_TRUE(moved.ok()) << moved.error_message();
  EXPECT_TRUE(watcher.WaitFor(
      [](const std::vector<v1::MatchEvent>& events) { return MovesSeen(events).size() == 1; },
      absl::Seconds(10)));
  EXPECT_FALSE(watcher.WaitDone(absl::Milliseconds(1)));
}

TEST_F(AbuseTest, BotConnectionsWithNoCallAreClosedOnceIdleAndItsClientsReconnect) {
  std::unique_ptr<ServerProcess> bot = StartBot({"--workers=1", "--max_connection_idle_ms=1000"});
  ASSERT_NE(bot, nullptr);
  auto channel = grpc::CreateChannel(bot->address(), grpc::InsecureChannelCredentials());
  ASSERT_TRUE(ListGamesAnswers(channel));
  RawConnection silent(bot->port());
  ASSERT_TRUE(silent.connected());
  EXPECT_TRUE(silent.ClosedWithin(absl::Seconds(10)));
  // The client's own connection was closed while idle as well; its next call reconnects.
  EXPECT_TRUE(WentIdle(*channel, absl::Seconds(10)));
  EXPECT_TRUE(ListGamesAnswers(channel));
}

// HTTP/2 frame floods, from a raw socket (tests/raw_http.h): what no gRPC client sends.
bool BotAnswers(ServerProcess& bot) {
  return ListGamesAnswers(grpc::CreateChannel(bot.address(), grpc::InsecureChannelCredentials()));
}

// Opens `streams` calls to `path` on a fresh connection that acknowledged the server's
// SETTINGS, sends none of their messages, and says whether the server closed the connection
// within `wait`.
bool ClosedAfterOpeningStreams(int port, const std::string& path, int streams,
                               absl::Duration wait) {
  RawConnection connection(port);
  if (!connection.connected() || !connection.SendHttp2Preface()) return true;
  connection.Receive(absl::Milliseconds(300));  // the server's SETTINGS
  connection.Send(RawConnection::Http2Frame(RawConnection::kSettings, 1, 0, ""));  // ACK
  const std::string headers = RawConnection::GrpcRequestHeaders(path);
  std::string batch;
  for (int i = 0; i < streams; ++i) {
    batch += RawConnection::Http2Frame(RawConnection::kHeaders, 4 /* END_HEADERS */,
                                       static_cast<uint32_t>(2 * i + 1), headers);
  }
  connection.Send(batch);
  return connection.ClosedWithin(wait);
}

TEST(Http2AbuseTest, APingFloodLosesItsConnection) {
  // With ping strikes off, one connection sending PINGs as fast as loopback goes took ply-bot
  // from 51 MB to 365 MB and a health check from 1 ms to 2.3 s while it lasted.
  std::unique_ptr<ServerProcess> bot = StartBot({"--workers=1"});
  ASSERT_NE(bot, nullptr);
  RawConnection flood(bot->port());
  ASSERT_TRUE(flood.SendHttp2Preface());
  for (int i = 0; i < 200; ++i) {
    if (!flood.Send(RawConnection::Http2Frame(RawConnection::kPing, 0, 0, "12345678"))) break;
  }
  EXPECT_TRUE(flood.ClosedWithin(absl::Seconds(3)));
  // A client that pings every 20 s (ply's) is never near the limit; calls go on.
  EXPECT_TRUE(BotAnswers(*bot));
}

TEST(Http2AbuseTest, StreamsOpenAtOnceOnOneConnectionAreBounded) {
  // Unbounded before: 206,000 streams opened in 5 s on two connections took ply-bot to 3 GB,
  // growing after the attacker left, and no health check was answered for 5 s after.
  std::unique_ptr<ServerProcess> bot = StartBot({"--workers=1"});
  ASSERT_NE(bot, nullptr);
  EXPECT_FALSE(ClosedAfterOpeningStreams(bot->port(), "/ply.v1.BotService/ListGames", 900,
                                         absl::Seconds(1)));
  EXPECT_TRUE(ClosedAfterOpeningStreams(bot->port(), "/ply.v1.BotService/ListGames", 1100,
                                        absl::Seconds(5)));
  EXPECT_TRUE(BotAnswers(*bot));
}

TEST_F(AbuseTest, LobbyStreamsOpenAtOnceOnOneConnectionAreBounded) {
  Start({"--max_concurrent_streams=50"}, "--bot_target=");
  EXPECT_FALSE(ClosedAfterOpeningStreams(lobby_->port(), "/ply.v1.LobbyService/ListGames", 40,
                                         absl::Seconds(1)));
  EXPECT_TRUE(ClosedAfterOpeningStreams(lobby_->port(), "/ply.v1.LobbyService/ListGames", 60,
                                        absl::Seconds(5)));
}

// A person's match against a beginner bot, created by `stub` as the player `key` (a guest for
// ""): the response, or the refusal.
grpc::Status BotMatchFor(v1::LobbyService::Stub* stub, const std::string& key,
                         v1::CreateMatchResponse* out, const std::string& forwarded_for = "") {
  v1::CreateMatchRequest create;
  create.mutable_spec()->set_name("connect4");
  create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  v1::SeatSpec* bot = create.add_seats();
  bot->set_kind(v1::SEAT_KIND_BOT);
  bot->set_difficulty("beginner");
  create.set_take_seat(0);
  if (key.empty()) create.set_display_name("guest");
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  if (!key.empty()) context.AddMetadata("x-ply-player", key);
  if (!forwarded_for.empty()) context.AddMetadata("x-forwarded-for", forwarded_for);
  return stub->CreateMatch(&context, create, out);
}

TEST_F(AbuseTest, TheLastBotSeatsAreKeptForClientsThatHoldHardlyAny) {
  // Eight addresses at the shipped quotas (32 bot seats each) booked all 256 bot seats and kept
  // them; everyone else was told that every bot is busy. The last quarter of the seats now goes
  // only to clients that hold fewer than two.
  Start({"--max_bot_seats=8", "--client_bot_seats=8"}, BotTargetFlag());
  v1::CreateMatchResponse created;
  for (int i = 0; i < 6; ++i) {
    grpc::Status s = BotMatchFor(v4_.get(), "", &created);
    ASSERT_TRUE(s.ok()) << i << ": " << s.error_message();
  }
  grpc::Status hoarder = BotMatchFor(v4_.get(), "", &created);
  EXPECT_EQ(hoarder.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(hoarder.error_message().find("kept for people who hold fewer than 2"),
            std::string::npos)
      << hoarder.error_message();
  // Someone else gets them, up to the lobby's bound.
  for (int i = 0; i < 2; ++i) {
    grpc::Status s = BotMatchFor(v6_.get(), "", &created);
    EXPECT_TRUE(s.ok()) << i << ": " << s.error_message();
  }
  grpc::Status full = BotMatchFor(v6_.get(), "", &created);
  EXPECT_EQ(full.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(full.error_message().find("every bot is busy"), std::string::npos)
      << full.error_message();
}

TEST_F(AbuseTest, FreshIpv6AddressesOfOneNetworkDoNotTakeTheLastBotSeats) {
  // An IPv6 client is counted by its /64, and its holder (a /48 from any tunnel broker) has
  // 65,536 of them: each fresh /64 took two of the seats kept for people who hold hardly any,
  // until none was left. Behind a trusted proxy, each request names its client.
  Start({"--max_bot_seats=8", "--client_bot_seats=8", "--trusted_proxies=127.0.0.1"},
        BotTargetFlag());
  v1::CreateMatchResponse created;
  for (int i = 0; i < 6; ++i) {
    grpc::Status s = BotMatchFor(v4_.get(), "", &created, absl::StrCat("2001:db8:5:", i, "::1"));
    ASSERT_TRUE(s.ok()) << i << ": " << s.error_message();
  }
  // The last quarter: a fresh /64 of the same /48 is its network, which holds six.
  grpc::Status fresh = BotMatchFor(v4_.get(), "", &created, "2001:db8:5:99::1");
  EXPECT_EQ(fresh.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << fresh.error_message();
  EXPECT_NE(fresh.error_message().find("your network already has 6"), std::string::npos)
      << fresh.error_message();
  // Another network, and an IPv4 client, get them.
  EXPECT_TRUE(BotMatchFor(v4_.get(), "", &created, "2001:db8:6::1").ok());
  EXPECT_TRUE(BotMatchFor(v4_.get(), "", &created, "198.51.100.7").ok());
}

TEST_F(AbuseTest, RegistrationsAreBoundedPerAddressAndFreshAccountsShareItsQuotas) {
  // The free-accounts attack: one address registers account after account, each with its own
  // quota, until it holds every bot seat.
  Start({"--client_registrations_per_hour=3", "--client_bot_seats=2", "--address_quota_multiple=2"},
        BotTargetFlag());
  std::vector<std::string> keys;
  for (int i = 0; i < 3; ++i) {
    keys.push_back(::ply::testing::Register(v4_.get(), absl::StrCat("fresh", i)));
  }
  v1::LoginResponse refused;
  grpc::Status s = ::ply::testing::Login(v4_.get(), "fresh3", "", &refused);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("registered from your address"), std::string::npos)
      << s.error_message();
  // Logging in again with a key is no registration; another address registers.
  v1::LoginResponse again;
  EXPECT_TRUE(::ply::testing::Login(v4_.get(), "fresh0", keys[0], &again).ok());
  const std::string other = ::ply::testing::Register(v6_.get(), "elsewhere");
  // Each account has 2 bot seats, the address 4: the third account gets nothing.
  v1::CreateMatchResponse created;
  for (int i = 0; i < 2; ++i) {
    for (int m = 0; m < 2; ++m) {
      s = BotMatchFor(v4_.get(), keys[i], &created);
      EXPECT_TRUE(s.ok()) << "account " << i << ": " << s.error_message();
    }
    s = BotMatchFor(v4_.get(), keys[i], &created);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << "account " << i;
  }
  s = BotMatchFor(v4_.get(), keys[2], &created);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("your address"), std::string::npos) << s.error_message();
  // A guest from that address meets the address's bound too; the other address does not.
  s = BotMatchFor(v4_.get(), "", &created);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("your address"), std::string::npos) << s.error_message();
  s = BotMatchFor(v6_.get(), other, &created);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(AbuseTest, RematchesCountAgainstTheCreatorsQuotaAcrossARestart) {
  // The rematch attack: a guest resigns its bot matches and rematches them; each rematch was
  // stored without its creator (once the lobby reloaded the match), so it counted nowhere.
  const std::vector<std::string> flags = {"--client_bot_seats=2", "--bot_pacing_ms=0"};
  Start(flags, BotTargetFlag());
  v1::CreateMatchResponse first, second, third;
  ASSERT_TRUE(BotMatchFor(v4_.get(), "", &first).ok());
  ASSERT_TRUE(BotMatchFor(v4_.get(), "", &second).ok());
  EXPECT_EQ(BotMatchFor(v4_.get(), "", &third).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ASSERT_TRUE(Resign(v4_.get(), first.match().id(), first.seat_token()).ok());
  ASSERT_TRUE(Resign(v4_.get(), second.match().id(), second.seat_token()).ok());
  // A restart: the finished matches are read back from the database.
  lobby_.reset();
  Start(flags, BotTargetFlag());
  v1::OfferRematchResponse r1, r2, r3;
  ASSERT_TRUE(OfferRematch(v4_.get(), first.match().id(), first.seat_token(), &r1).ok());
  ASSERT_TRUE(OfferRematch(v4_.get(), second.match().id(), second.seat_token(), &r2).ok());
  ASSERT_NE(r1.rematch_id(), 0);
  ASSERT_NE(r2.rematch_id(), 0);
  // Both rematches are the guest's: a new match is refused.
  grpc::Status s = BotMatchFor(v4_.get(), "", &third);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << "rematches counted nowhere";
  // One ends: room for one more, which a new match takes; a rematch past it is refused.
  ASSERT_TRUE(Resign(v4_.get(), r1.rematch_id(), r1.seat_token()).ok());
  ASSERT_TRUE(BotMatchFor(v4_.get(), "", &third).ok());
  s = OfferRematch(v4_.get(), r1.rematch_id(), r1.seat_token(), &r3);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  // Another address is not held back.
  v1::CreateMatchResponse elsewhere;
  EXPECT_TRUE(BotMatchFor(v6_.get(), "", &elsewhere).ok());
}

TEST_F(AbuseTest, AnalysisStreamsCountAgainstTheClientsStreamCap) {
  // AnalyzeMatch streams (which may wait minutes for another request's analysis) were held
  // outside --client_streams: one client could open any number.
  Start({"--client_streams=2"}, BotTargetFlag());
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(v4_.get(), "connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {},
                     &created, TakingSeat(0, "carol"))
                  .ok());
  const int64_t id = created.match().id();
  Watch first(v4_.get(), id);
  Watch second(v4_.get(), id);
  ASSERT_TRUE(first.WaitFor([](const auto& e) { return !e.empty(); }, absl::Seconds(5)));
  ASSERT_TRUE(second.WaitFor([](const auto& e) { return !e.empty(); }, absl::Seconds(5)));
  const ::ply::testing::Analysed full = ::ply::testing::Analyze(v4_.get(), id);
  EXPECT_EQ(full.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << full.status.error_message();
  EXPECT_NE(full.status.error_message().find("streams"), std::string::npos);
  // Another client is answered (the match has not begun: nothing to analyse yet).
  const ::ply::testing::Analysed other = ::ply::testing::Analyze(v6_.get(), id);
  EXPECT_EQ(other.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << other.status.error_message();
}

// A TCP connection to 127.0.0.1:`port` from the loopback address `from` (127.0.0.x): each is
// another client to a server that counts connections per address. -1 when it failed.
int ConnectFrom(const std::string& from, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, from.c_str(), &local.sin_addr);
  sockaddr_in remote{};
  remote.sin_family = AF_INET;
  remote.sin_port = htons(static_cast<uint16_t>(port));
  remote.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof(remote)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

TEST_F(AbuseTest, SlowConnectionsDoNotHoldTheMetricsScraperUp) {
  // 16 connections from 4 addresses that send half a request and wait took every worker of the
  // metrics endpoint for its 10 s request deadline: a scrape waited 9.5 s.
  Start({"--metrics_port=0"}, BotTargetFlag());
  LobbyInstance probe = StartLobbyInstance({"--metrics_port=0"});
  ASSERT_NE(probe.metrics_port, 0);
  EXPECT_NE(probe.process->ready_line().find("metrics http://127.0.0.1:"), std::string::npos)
      << "metrics are served on loopback unless asked: " << probe.process->ready_line();
  std::vector<int> slow;
  for (int a = 2; a <= 5; ++a) {
    for (int i = 0; i < 4; ++i) {
      const int fd = ConnectFrom(absl::StrCat("127.0.0.", a), probe.metrics_port);
      ASSERT_GE(fd, 0);
      const std::string half = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
      ASSERT_EQ(send(fd, half.data(), half.size(), MSG_NOSIGNAL),
                static_cast<ssize_t>(half.size()));
      slow.push_back(fd);
    }
  }
  absl::SleepFor(absl::Milliseconds(200));
  const absl::Time start = absl::Now();
  httplib::Client scraper("127.0.0.1", probe.metrics_port);
  scraper.set_read_timeout(15, 0);
  httplib::Result page = scraper.Get("/metrics");
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_LT(took, absl::Seconds(3)) << "a scrape behind 16 slow connections took " << took;
  for (int fd : slow) close(fd);
}

}  // namespace
}  // namespace ply
