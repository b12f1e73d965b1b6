// ply-lobby end to end when things go wrong: a lobby killed with SIGKILL resuming every match, a
// database outage, dead bot instances and new ones from the target file, a flooding client, a
// watcher that cannot keep up, and the match cache's bound (the lobby in-process). Real
// PostgreSQL, ply-bot and ply-lobby processes (stack_helper.h's LobbyFixture).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/core/random.h"
#include "engine/registry/registry.h"
#include "lobby-server/bot_targets.h"
#include "lobby-server/executor.h"
#include "lobby-server/lobby.h"
#include "lobby-server/storage/postgres/postgres_store.h"
#include "ply/v1/bot.grpc.pb.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/process_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::HasGameOver;
using ::ply::testing::MovesSeen;
using ::ply::testing::RaceCount;
using ::ply::testing::ServerProcess;
using ::ply::testing::TakingSeat;
using ::ply::testing::Watch;

using LobbyTest = ::ply::testing::LobbyFixture;

TEST_F(LobbyTest, SigkilledLobbyResumesEveryMatchFromTheDatabase) {
  // Two human matches part-way, two bot matches running, one person against a bot.
  std::vector<std::pair<int64_t, std::pair<std::string, std::string>>> humans;
  std::vector<int> acknowledged;
  for (int i = 0; i < 2; ++i) {
    humans.push_back(HumanMatch("connect4"));
    const std::vector<std::string> moves = {"1", "2", "1", "2"};
    int ply = 0;
    for (; ply < 2 + 2 * i; ++ply) {
      ASSERT_TRUE(Move(humans.back().first, ply, moves[ply],
                       ply % 2 ? humans.back().second.second : humans.back().second.first)
                      .ok());
    }
    acknowledged.push_back(ply);
  }
  std::vector<int64_t> bot_matches;
  for (int i = 0; i < 2; ++i) {
    v1::CreateMatchResponse created;
    ASSERT_TRUE(Create("connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"beginner", "easy"},
                       &created, [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(40); })
                    .ok());
    bot_matches.push_back(created.match().id());
  }
  v1::CreateMatchResponse vs_bot;
  ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_HUMAN}, {"medium", ""}, &vs_bot,
                     [](v1::CreateMatchRequest& r) {
                       r.set_take_seat(1);
                       r.set_display_name("erin");
                       r.set_bot_pacing_ms(0);
                     })
                  .ok());
  auto watch = std::make_unique<Watch>(stub_.get(), bot_matches[0]);
  // Let the bots get some moves in, then kill the lobby without warning.
  WaitMatch(bot_matches[0], [](const v1::Match& m) { return m.moves_size() >= 4; });
  ASSERT_TRUE(
      watch->WaitFor([](const auto& e) { return MovesSeen(e).size() >= 4; }, absl::Seconds(10)));
  lobby_->Signal(SIGKILL);
  ASSERT_TRUE(lobby_->WaitExit(absl::Seconds(5)).has_value());
  ASSERT_TRUE(watch->WaitDone(absl::Seconds(5)));
  const std::vector<std::string> seen_before = MovesSeen(watch->events());
  watch.reset();

  StartLobby();
  // Every acknowledged move is there.
  for (size_t i = 0; i < humans.size(); ++i) {
    EXPECT_EQ(Get(humans[i].first).moves_size(), acknowledged[i]);
  }
  // The watcher reconnects from the last ply it saw and gets the rest.
  Watch resumed(stub_.get(), bot_matches[0], static_cast<int>(seen_before.size()));
  // The human matches continue to their end: Red plays column 1 four times.
  for (size_t i = 0; i < humans.size(); ++i) {
    auto& [id, tokens] = humans[i];
    int ply = acknowledged[i];
    while (Get(id).status() == v1::MATCH_STATUS_ACTIVE) {
      const std::string move = ply % 2 ? "2" : "1";
      ASSERT_TRUE(Move(id, ply, move, ply % 2 ? tokens.second : tokens.first).ok());
      ++ply;
    }
    EXPECT_EQ(Get(id).result().winner(), 0);
  }
  // The person against the bot finishes too.
  v1::Match end = PlayAgainstBot(vs_bot.match().id(), vs_bot.seat_token(), 1);
  EXPECT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
  // The bot matches finish by themselves.
  for (int64_t id : bot_matches) {
    v1::Match m =
        WaitMatch(id, [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; });
    EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  }
  ASSERT_TRUE(resumed.WaitDone(absl::Seconds(30)));
  std::vector<std::string> all = seen_before;
  for (const std::string& m : MovesSeen(resumed.events())) all.push_back(m);
  std::vector<std::string> stored;
  const v1::Match final_match = Get(bot_matches[0]);
  for (const auto& m : final_match.moves()) stored.push_back(m.move());
  EXPECT_EQ(all, stored);
  EXPECT_TRUE(HasGameOver(resumed.events()));
}

TEST_F(LobbyTest, ALobbysDowntimeIsNotChargedToTheClockOfTheSideToMove) {
  // A fifth hostile review killed the only lobby during a rated 20 s game and restarted it 25 s
  // later: the side to move, who could not move meanwhile, lost on time as the lobby came back,
  // rated (1500 -> 1338). A claimed match gives the side to move back what it had at the start
  // of its turn, up to --reclaim_clock_floor_s (15 s).
  const auto [id, tokens] = HumanMatch("connect4", [](v1::CreateMatchRequest& r) {
    r.mutable_time_control()->set_initial_ms(3000);
  });
  const std::vector<std::string> moves = {"1", "2", "1"};
  for (int ply = 0; ply < 3; ++ply) {
    ASSERT_TRUE(Move(id, ply, moves[ply], ply % 2 ? tokens.second : tokens.first).ok());
  }
  // Yellow to move with about 3 s; the lobby is down for 4.
  lobby_->Signal(SIGKILL);
  ASSERT_TRUE(lobby_->WaitExit(absl::Seconds(5)).has_value());
  absl::SleepFor(absl::Seconds(4));
  StartLobby();
  const v1::Match back = Get(id);
  ASSERT_EQ(back.status(), v1::MATCH_STATUS_ACTIVE) << back.result().text();
  EXPECT_TRUE(Move(id, 3, "2", tokens.second).ok());
  // Only what the turn had is given back: Red's clock is what it was.
  const v1::Match after = Get(id);
  ASSERT_EQ(after.status(), v1::MATCH_STATUS_ACTIVE) << after.result().text();
  EXPECT_GT(after.seats(1).clock_ms(), 1000);
  EXPECT_LE(after.seats(1).clock_ms(), 3000);
}

TEST_F(LobbyTest, DatabaseOutageAnswersUnavailableThenPlayContinues) {
  auto [id, tokens] = HumanMatch("connect4");
  ASSERT_TRUE(Move(id, 0, "4", tokens.first).ok());
  v1::CreateMatchResponse bots;
  ASSERT_TRUE(Create("connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"beginner", "beginner"},
                     &bots, [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(50); })
                  .ok());
  ASSERT_TRUE(cluster_->StopServer().ok());
  grpc::Status s = Move(id, 1, "4", tokens.second);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  s = Move(id, 1, "4", tokens.second);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  ASSERT_TRUE(cluster_->StartServer().ok());
  // The lobby reconnects by itself; a client retries UNAVAILABLE.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  do {
    s = Move(id, 1, "4", tokens.second);
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE) break;
    absl::SleepFor(absl::Milliseconds(100));
  } while (absl::Now() < deadline);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(Move(id, 2, "3", tokens.first).ok());
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", id)), "3");
  // The bot match carries on to its end.
  v1::Match m = WaitMatch(bots.match().id(), [](const v1::Match& m) {
    return m.status() == v1::MATCH_STATUS_FINISHED;
  });
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(lobby_->WaitExit(absl::Milliseconds(1)), std::nullopt) << "the lobby must not exit";
}

TEST_F(LobbyTest, DeadBotInstancesShowAsBotTroubleNotAHang) {
  RestartLobbyWithoutBots(/*give_up_s=*/2);
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_HUMAN}, {"easy", ""}, &created,
                     TakingSeat(1, "frank"))
                  .ok());
  Watch w(stub_.get(), created.match().id());
  ASSERT_TRUE(w.WaitDone(absl::Seconds(30)));
  bool trouble = false;
  for (const auto& e : w.events()) trouble |= e.has_bot_trouble();
  EXPECT_TRUE(trouble);
  v1::Match m = Get(created.match().id());
  EXPECT_EQ(m.result().reason(), v1::END_REASON_BOT_FAILURE);
  EXPECT_EQ(m.result().winner(), 1);
}

TEST_F(LobbyTest, ABotThatRunsOutOfTimeBecauseItsServiceIsDownIsABotFailureNotALoss) {
  // A hostile review killed ply-bot during a rated 15 s game: the bot's clock ran while the
  // lobby retried, and the person won on time, rated (1500 -> 1930). A bot never runs out of
  // time on its own (it budgets every move from its clock), so its flag is the service's failure.
  RestartLobbyWithoutBots(/*give_up_s=*/60);
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_HUMAN}, {"easy", ""}, &created,
                     [](v1::CreateMatchRequest& r) {
                       TakingSeat(1, "frank")(r);
                       r.mutable_time_control()->set_initial_ms(1500);
                     })
                  .ok());
  const v1::Match m = WaitMatch(
      created.match().id(),
      [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; },
      absl::Seconds(20));
  ASSERT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_BOT_FAILURE) << m.result().text();
  EXPECT_EQ(m.result().winner(), 1);
  EXPECT_EQ(m.result().text(),
            "X ran out of time (the bot service did not answer in time); O wins");
}

TEST(BotTargetsTest, ReadsInstanceLists) {
  EXPECT_EQ(lobby::TargetFromList("127.0.0.1:1\n# a comment\n127.0.0.1:2, 127.0.0.1:3\n"),
            "ipv4:127.0.0.1:1,127.0.0.1:2,127.0.0.1:3");
  EXPECT_EQ(lobby::TargetFromList("  \n# nothing\n"), "");
}

int64_t BotRequests(ServerProcess* bot) {
  auto stub = v1::BotService::NewStub(bot->channel());
  grpc::ClientContext context;
  v1::GetMetricsResponse metrics;
  EXPECT_TRUE(stub->GetMetrics(&context, v1::GetMetricsRequest(), &metrics).ok());
  return metrics.requests();
}

TEST_F(LobbyTest, TakesNewBotInstancesFromItsTargetFileWithoutARestart) {
  const std::string path = absl::StrCat("/tmp/ply-bots-", getpid(), ".txt");
  auto write = [&](ServerProcess* bot) {
    const std::string tmp = path + ".new";
    FILE* f = fopen(tmp.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fprintf(f, "%s\n", bot->address().c_str());
    fclose(f);
    // Renamed into place, so the lobby never reads half a file.
    ASSERT_EQ(rename(tmp.c_str(), path.c_str()), 0);
  };
  write(bots_[0]);
  lobby_.reset();
  StartLobby({absl::StrCat("--bot_target=file:", path)});
  auto play_bot_match = [&] {
    v1::CreateMatchResponse created;
    ASSERT_TRUE(
        Create("tictactoe", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"easy", "easy"}, &created)
            .ok());
    v1::Match end = WaitMatch(created.match().id(), [](const v1::Match& m) {
      return m.status() == v1::MATCH_STATUS_FINISHED;
    });
    EXPECT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
  };
  int64_t before = BotRequests(bots_[1]);
  play_bot_match();
  EXPECT_EQ(BotRequests(bots_[1]), before) << "bot 1 is not listed yet";
  write(bots_[1]);
  // The lobby re-reads the file every second: within a few matches bot 1 takes the requests.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (BotRequests(bots_[1]) == before && absl::Now() < deadline) play_bot_match();
  ASSERT_GT(BotRequests(bots_[1]), before);
  const int64_t before0 = BotRequests(bots_[0]);
  play_bot_match();
  EXPECT_EQ(BotRequests(bots_[0]), before0) << "bot 0 was removed from the list";
  unlink(path.c_str());
}

TEST_F(LobbyTest, AFloodingClientIsRefusedWithoutHurtingOthers) {
  lobby_.reset();
  // Dual-stack: this test's IPv4 calls and IPv6 calls count as two clients.
  // A slow refill keeps the count of refusals independent of how fast this machine makes calls.
  StartLobby({"--host=[::]", "--client_calls_per_s=1", "--client_burst=20", "--client_streams=2"});
  auto [id, tokens] = HumanMatch("tictactoe");
  int refused = 0;
  for (int i = 0; i < 100; ++i) {
    v1::GetMatchRequest request;
    request.set_match_id(id);
    grpc::ClientContext context;
    v1::Match m;
    grpc::Status s = stub_->GetMatch(&context, request, &m);
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++refused;
      EXPECT_NE(s.error_message().find("slow down"), std::string::npos);
    }
  }
  EXPECT_GT(refused, 50);
  // Another client (over IPv6) is served at once.
  auto other = v1::LobbyService::NewStub(grpc::CreateChannel(absl::StrCat("[::1]:", lobby_->port()),
                                                             grpc::InsecureChannelCredentials()));
  {
    v1::GetMatchRequest request;
    request.set_match_id(id);
    grpc::ClientContext context;
    v1::Match m;
    grpc::Status s = other->GetMatch(&context, request, &m);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  // Streams: two per client; the third is refused, the other client's are not.
  absl::SleepFor(absl::Seconds(2));  // the flooding client's bucket refills a little
  Watch w1(other.get(), id), w2(other.get(), id);
  // Both hold their slots (their snapshots arrived) before the third asks.
  for (Watch* w : {&w1, &w2}) {
    ASSERT_TRUE(w->WaitFor([](const auto& e) { return !e.empty(); }, absl::Seconds(10)));
  }
  Watch w3(other.get(), id);
  ASSERT_TRUE(w3.WaitDone(absl::Seconds(10)));
  EXPECT_EQ(w3.status().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  Watch mine(stub_.get(), id);
  ASSERT_TRUE(mine.WaitFor([](const auto& e) { return !e.empty(); }, absl::Seconds(5)));
  EXPECT_TRUE(mine.events()[0].has_snapshot());
}

TEST_F(LobbyTest, AWatcherThatCannotKeepUpIsDroppedAndOthersAreNot) {
  lobby_.reset();
  StartLobby({"--watcher_queue=2"});
  auto [id, tokens] = HumanMatch("gomoku", [](v1::CreateMatchRequest& r) {
    (*r.mutable_spec()->mutable_options())["size"] = "20";
  });
  // A watcher that never reads, on a connection with a small flow-control window (no window
  // growth): once the window is full its events pile up in the lobby's queue, and the lobby
  // drops it.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8192);
  auto slow = v1::LobbyService::NewStub(
      grpc::CreateCustomChannel(lobby_->address(), grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext stuck_context;
  stuck_context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  v1::WatchMatchRequest request;
  request.set_match_id(id);
  auto stuck = slow->WatchMatch(&stuck_context, request);
  Watch reader(stub_.get(), id);
  ASSERT_TRUE(reader.WaitFor([](const auto& e) { return !e.empty(); }, absl::Seconds(5)));
  // Moves that never make five (checked with the engine), each event about a kilobyte of board.
  auto game = CreateGame("gomoku", {{"size", "20"}});
  ASSERT_TRUE(game.ok());
  Rng rng(3);
  int ply = 0;
  for (; ply < 250; ++ply) {
    std::vector<std::string> legal = (*game)->LegalMoves();
    std::string move;
    for (int tries = 0; tries < 50 && move.empty(); ++tries) {
      const std::string m = legal[rng.Below(legal.size())];
      ASSERT_TRUE((*game)->Play(m).ok());
      if (!(*game)->Status().over) move = m;
      ASSERT_TRUE((*game)->Undo().ok());
    }
    if (move.empty()) break;
    ASSERT_TRUE((*game)->Play(move).ok());
    grpc::Status s = Move(id, ply, move, ply % 2 ? tokens.second : tokens.first);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  // The reading watcher saw every move, in order, although the other one stalled.
  // (Generous: under `make tsan` on a busy machine the 250 events take many seconds.)
  ASSERT_TRUE(reader.WaitFor([&](const auto& e) { return MovesSeen(e).size() == size_t(ply); },
                             absl::Seconds(60)));
  // The stuck one, read at last, ends with RESOURCE_EXHAUSTED after what it had been sent.
  v1::MatchEvent e;
  int read = 0;
  while (stuck->Read(&e)) ++read;
  grpc::Status end = stuck->Finish();
  EXPECT_EQ(end.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << end.error_message();
  EXPECT_LT(read, ply + 1);
  EXPECT_NE(end.error_message().find("after_ply"), std::string::npos) << end.error_message();
}

}  // namespace
}  // namespace ply

namespace ply::lobby {
namespace {

// The lobby in-process on the test's database: however many matches come and go, memory keeps
// only the bound of finished ones, and a forgotten match is loaded again when asked for.
TEST_F(LobbyTest, MatchCacheStaysWithinItsBound) {
  PostgresStore store({.url = url_});
  ASSERT_TRUE(store.Migrate().ok());
  Executor executor(2, 1000);
  Lobby lobby(&store, nullptr, &executor, LobbyOptions{.cache_size = 10});
  int64_t first = 0;
  for (int i = 0; i < 40; ++i) {
    v1::CreateMatchRequest create;
    create.mutable_spec()->set_name("tictactoe");
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.set_take_seat(0);
    create.set_display_name("a");
    absl::StatusOr<v1::CreateMatchResponse> created = lobby.CreateMatch(create);
    ASSERT_TRUE(created.ok()) << created.status();
    const int64_t id = created->match().id();
    if (first == 0) first = id;
    v1::JoinMatchRequest join;
    join.set_match_id(id);
    join.set_seat(1);
    join.set_display_name("b");
    ASSERT_TRUE(lobby.JoinMatch(join).ok());
    absl::StatusOr<v1::Match> resigned = lobby.Resign(id, created->seat_token());
    ASSERT_TRUE(resigned.ok()) << resigned.status();
    ASSERT_EQ(resigned->status(), v1::MATCH_STATUS_FINISHED);
  }
  EXPECT_LE(lobby.CachedMatches(), 11u);
  absl::StatusOr<v1::Match> again = lobby.GetMatch(first);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(again->result().reason(), v1::END_REASON_RESIGNATION);
  lobby.Shutdown();
  executor.Stop();
}

}  // namespace
}  // namespace ply::lobby
