// Several ply-lobby processes on one PostgreSQL database, end to end: any instance serves any
// call, live events cross instances, one instance drives a match's bots and another takes over
// when it dies, a ply raced through two instances is stored once, and a rolling restart loses
// nothing acknowledged. Real processes (PostgreSQL, ply-bot, ply-lobby) on loopback.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::Create;
using ::ply::testing::GetMatch;
using ::ply::testing::HasGameOver;
using ::ply::testing::Join;
using ::ply::testing::LobbyInstance;
using ::ply::testing::Move;
using ::ply::testing::Race;
using ::ply::testing::RaceCount;
using ::ply::testing::ServerProcess;
using ::ply::testing::TakingSeat;
using ::ply::testing::WaitMatch;
using ::ply::testing::Watch;

// A counter's value on an instance's /metrics page (-1 when absent or unreachable).
int64_t Metric(const LobbyInstance& lobby, const std::string& name) {
  httplib::Client client("127.0.0.1", lobby.metrics_port);
  client.set_connection_timeout(2);
  httplib::Result page = client.Get("/metrics");
  if (!page || page->status != 200) return -1;
  for (absl::string_view line : absl::StrSplit(page->body, '\n')) {
    if (absl::StartsWith(line, name + " ")) {
      int64_t value = 0;
      if (absl::SimpleAtoi(line.substr(name.size() + 1), &value)) return value;
    }
  }
  return -1;
}

// Plies of the moves a watcher was sent, in order (a snapshot or resync restarts the list).
std::vector<int> PliesSeen(const std::vector<v1::MatchEvent>& events) {
  std::vector<int> plies;
  for (const v1::MatchEvent& e : events) {
    const v1::Match* whole = e.has_snapshot() ? &e.snapshot()
                             : e.has_resync() ? &e.resync()
                                              : nullptr;
    if (whole != nullptr) {
      plies.clear();
      for (const v1::MoveRecord& m : whole->moves()) plies.push_back(m.ply());
    } else if (e.has_move_applied()) {
      plies.push_back(e.move_applied().move().ply());
    }
  }
  return plies;
}

std::vector<int> OneTo(int n) {
  std::vector<int> v;
  for (int i = 1; i <= n; ++i) v.push_back(i);
  return v;
}

class LobbyScaleTest : public ::ply::testing::StackFixture {
 protected:
  void SetUp() override { UseNewDatabase("scale"); }

  // A lobby on the test's database: both bots, no bot pacing, quick claims, metrics on.
  LobbyInstance StartInstance(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> flags = {BotTargetFlag(), "--bot_pacing_ms=0", "--claim_ms=200",
                                      "--metrics_port=0",
                                      // Every test client is 127.0.0.1: room for its bot matches.
                                      "--client_bot_matches=8"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    return StartLobbyInstance(flags);
  }
};

TEST_F(LobbyScaleTest, PlayersOnTwoInstancesPlayToAWinAndASpectatorSeesEveryMoveOnce) {
  LobbyInstance a = StartInstance();
  LobbyInstance b = StartInstance();
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(a.stub.get(), "connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {},
                     &created, TakingSeat(0, "alice"))
                  .ok());
  const int64_t id = created.match().id();
  // The spectator watches through B, on a connection of its own, before anyone has joined.
  auto spectator_channel = grpc::CreateCustomChannel(
      b.process->address(), grpc::InsecureChannelCredentials(), grpc::ChannelArguments());
  auto spectator_stub = v1::LobbyService::NewStub(spectator_channel);
  Watch spectator(spectator_stub.get(), id);
  v1::JoinMatchResponse joined;
  ASSERT_TRUE(Join(b.stub.get(), id, 1, "bob", &joined).ok());
  // Alice plays column 1 through A, Bob column 2 through B, each on the other's heels: Alice's
  // fourth disc wins. Each side moves as soon as the other's move is acknowledged.
  const std::vector<std::string> moves = {"1", "2", "1", "2", "1", "2", "1"};
  for (size_t ply = 0; ply < moves.size(); ++ply) {
    const bool alice = ply % 2 == 0;
    grpc::Status s = Move(alice ? a.stub.get() : b.stub.get(), id, static_cast<int>(ply),
                          moves[ply], alice ? created.seat_token() : joined.seat_token());
    ASSERT_TRUE(s.ok()) << "ply " << ply << ": " << s.error_message();
  }
  ASSERT_TRUE(spectator.WaitDone(absl::Seconds(10)));
  const std::vector<v1::MatchEvent> events = spectator.events();
  EXPECT_EQ(PliesSeen(events), OneTo(7));
  EXPECT_EQ(::ply::testing::MovesSeen(events), moves);
  ASSERT_TRUE(HasGameOver(events));
  EXPECT_EQ(events.back().game_over().result().winner(), 0);
  EXPECT_TRUE(spectator.status().ok()) << spectator.status().error_message();
  // Both instances answer the same, at once.
  for (LobbyInstance* lobby : {&a, &b}) {
    absl::StatusOr<v1::Match> m = GetMatch(lobby->stub.get(), id);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->status(), v1::MATCH_STATUS_FINISHED);
    EXPECT_EQ(m->moves_size(), 7);
  }
}

TEST_F(LobbyScaleTest, WatchersThatLeftAQuietMatchAreNotKept) {
  // A waiting match has no news, so nothing tells the lobby that its watchers left: a client
  // opening and cancelling watch streams on it grew its list (and the gauge) by one a call.
  LobbyInstance a = StartInstance();
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(a.stub.get(), "connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {},
                     &created, TakingSeat(0, "alice"))
                  .ok());
  const int64_t id = created.match().id();
  for (int i = 0; i < 30; ++i) {
    Watch w(a.stub.get(), id);
    for (int wait = 0; wait < 200 && w.events().empty(); ++wait) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    ASSERT_FALSE(w.events().empty()) << "watch " << i << " got no snapshot";
  }  // each cancelled as it goes
  absl::SleepFor(absl::Milliseconds(300));
  Watch last(a.stub.get(), id);
  for (int wait = 0; wait < 200 && last.events().empty(); ++wait) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_FALSE(last.events().empty());
  EXPECT_LE(Metric(a, "ply_lobby_watchers"), 2);
}

TEST_F(LobbyScaleTest, AMoveThroughOneInstanceIsSeenByTheOthersNextCall) {
  LobbyInstance a = StartInstance();
  LobbyInstance b = StartInstance();
  const ::ply::testing::HumanSeats match =
      ::ply::testing::HumanMatch(a.stub.get(), a.stub.get(), "tictactoe");
  const int64_t id = match.id;
  // B has the match in memory before the moves.
  ASSERT_TRUE(GetMatch(b.stub.get(), id).ok());
  const std::vector<std::string> moves = {"b2", "a1", "c3", "a3", "a2"};
  for (size_t ply = 0; ply < moves.size(); ++ply) {
    const std::string& token = match.tokens[ply % 2];
    ASSERT_TRUE(Move(a.stub.get(), id, static_cast<int>(ply), moves[ply], token).ok());
    absl::StatusOr<v1::Match> seen = GetMatch(b.stub.get(), id);
    ASSERT_TRUE(seen.ok()) << seen.status();
    EXPECT_EQ(seen->moves_size(), static_cast<int>(ply) + 1) << "B answered from old state";
  }
}

TEST_F(LobbyScaleTest, TheSamePlyRacedThroughTwoInstancesIsStoredOnce) {
  LobbyInstance a = StartInstance();
  LobbyInstance b = StartInstance();
  for (int round = 0; round < 10; ++round) {
    const ::ply::testing::HumanSeats match =
        ::ply::testing::HumanMatch(a.stub.get(), b.stub.get(), "connect4");
    const int64_t id = match.id;
    // Both instances have the match in memory, so both take their fast path.
    ASSERT_TRUE(GetMatch(a.stub.get(), id).ok());
    ASSERT_TRUE(GetMatch(b.stub.get(), id).ok());
    const RaceCount race = Race({
        [&] { return Move(a.stub.get(), id, 0, "3", match.tokens[0]); },
        [&] { return Move(b.stub.get(), id, 0, "5", match.tokens[0]); },
    });
    EXPECT_EQ(race.ok, 1);
    EXPECT_EQ(race.refused, 1);
    EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", id)), "1");
    // Whichever move won, both instances now say so.
    const std::string stored = Sql(absl::StrCat("SELECT move FROM moves WHERE match_id = ", id));
    for (LobbyInstance* lobby : {&a, &b}) {
      absl::StatusOr<v1::Match> m = GetMatch(lobby->stub.get(), id);
      ASSERT_TRUE(m.ok());
      ASSERT_EQ(m->moves_size(), 1);
      EXPECT_EQ(m->moves(0).move(), stored);
    }
  }
}

TEST_F(LobbyScaleTest, ABotMatchGoesOnThroughAnotherInstanceWhenItsDriverIsKilled) {
  LobbyInstance a = StartInstance();
  LobbyInstance b = StartInstance();
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(a.stub.get(), "connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT},
                     {"beginner", "beginner"}, &created,
                     [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(150); })
                  .ok());
  const int64_t id = created.match().id();
  Watch spectator(b.stub.get(), id);
  // A created it and drives it.
  EXPECT_EQ(Metric(a, "ply_lobby_leases_held"), 1);
  WaitMatch(b.get(), id, [](const v1::Match& m) { return m.moves_size() >= 4; });
  a.process->Signal(SIGKILL);
  a.process->WaitExit(absl::Seconds(5));
  const absl::Time killed = absl::Now();
  const int at_kill = WaitMatch(b.get(), id, [](const v1::Match&) { return true; }).moves_size();
  // B takes over: the next move within the claim interval plus the bot's time and pacing.
  v1::Match after = WaitMatch(b.get(), id, [&](const v1::Match& m) {
    return m.moves_size() > at_kill || m.status() == v1::MATCH_STATUS_FINISHED;
  });
  EXPECT_LT(absl::Now() - killed, absl::Seconds(3));
  after = WaitMatch(b.get(), id,
                    [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; });
  ASSERT_EQ(after.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(after.result().reason(), v1::END_REASON_RULES);
  ASSERT_TRUE(spectator.WaitDone(absl::Seconds(10)));
  EXPECT_EQ(PliesSeen(spectator.events()), OneTo(after.moves_size()));
  EXPECT_EQ(Metric(b, "ply_lobby_leases_taken_total"), 1);
  EXPECT_EQ(Metric(b, "ply_lobby_duplicate_bot_requests_total"), 0);
}

TEST_F(LobbyScaleTest, RefusedMovesWhileABotThinksDoNotAskTheBotAgain) {
  // With peers, a refusal is decided again on a fresh load: that reload must not send the bot
  // a second request for the position it is already searching.
  LobbyInstance a = StartInstance();
  LobbyInstance b = StartInstance();
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(a.stub.get(), "connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT},
                     {"", "hard"}, &created, TakingSeat(0, "alice"))
                  .ok());
  const int64_t id = created.match().id();
  ASSERT_TRUE(Move(a.stub.get(), id, 0, "4", created.seat_token()).ok());
  // The bot (hard: about a second) is thinking; the person keeps pressing.
  for (int i = 0; i < 10; ++i) {
    grpc::Status s = Move(a.stub.get(), id, 1, "3", created.seat_token());
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  }
  const v1::Match m =
      WaitMatch(a.get(), id, [](const v1::Match& m) { return m.moves_size() >= 2; });
  EXPECT_EQ(m.moves_size(), 2);
  EXPECT_EQ(Metric(a, "ply_lobby_bot_calls_total"), 1);
}

TEST_F(LobbyScaleTest, ARollingRestartOfBothInstancesLosesNothing) {
  std::vector<LobbyInstance> lobbies;
  lobbies.push_back(StartInstance());
  lobbies.push_back(StartInstance());
  std::mutex mu;
  // The addresses of the instances up now, for the players to move on to.
  auto stubs = [&] {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::shared_ptr<v1::LobbyService::Stub>> out;
    for (LobbyInstance& l : lobbies) {
      if (l.process != nullptr) out.push_back(v1::LobbyService::NewStub(l.process->channel()));
    }
    return out;
  };
  std::vector<int64_t> bot_matches;
  for (int i = 0; i < 3; ++i) {
    v1::CreateMatchResponse created;
    ASSERT_TRUE(Create(lobbies[i % 2].stub.get(), "connect4",
                       {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"beginner", "beginner"}, &created,
                       [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(200); })
                    .ok());
    bot_matches.push_back(created.match().id());
  }
  // Two people play tic-tac-toe games one after another, each move through whichever instance
  // answers; every acknowledged move is remembered.
  std::atomic<bool> stop{false};
  std::map<std::pair<int64_t, int>, std::string> acked;
  std::mutex acked_mu;
  std::thread players([&] {
    while (!stop) {
      auto all = stubs();
      v1::CreateMatchResponse created;
      v1::JoinMatchResponse joined;
      if (all.empty() ||
          !Create(all[0].get(), "tictactoe", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {},
                  &created, TakingSeat(0, "alice"))
               .ok() ||
          !Join(all.back().get(), created.match().id(), 1, "bob", &joined).ok()) {
        absl::SleepFor(absl::Milliseconds(50));
        continue;
      }
      const int64_t id = created.match().id();
      for (int turn = 0; !stop;) {
        all = stubs();
        if (all.empty()) continue;
        auto* stub = all[turn++ % all.size()].get();
        absl::StatusOr<v1::Match> m = GetMatch(stub, id);
        if (!m.ok()) continue;
        if (m->status() != v1::MATCH_STATUS_ACTIVE) break;
        const std::string& token = m->to_move() == 0 ? created.seat_token() : joined.seat_token();
        const std::string move = m->legal_moves(0);
        if (Move(stub, id, m->moves_size(), move, token).ok()) {
          std::lock_guard<std::mutex> lock(acked_mu);
          acked[{id, m->moves_size() + 1}] = move;
        }
        absl::SleepFor(absl::Milliseconds(20));
      }
    }
  });
  for (size_t i = 0; i < 2; ++i) {
    absl::SleepFor(absl::Seconds(1));
    // Drain one instance (SIGTERM), then start its replacement.
    std::unique_ptr<ServerProcess> old;
    {
      std::lock_guard<std::mutex> lock(mu);
      old = std::move(lobbies[i].process);
    }
    old->Signal(SIGTERM);
    EXPECT_EQ(old->WaitExit(absl::Seconds(10)), 0);
    LobbyInstance fresh = StartInstance();
    std::lock_guard<std::mutex> lock(mu);
    lobbies[i] = std::move(fresh);
  }
  absl::SleepFor(absl::Seconds(1));
  stop = true;
  players.join();
  // Every acknowledged move is stored, as acknowledged.
  ASSERT_GT(acked.size(), 10u);
  for (const auto& [key, move] : acked) {
    EXPECT_EQ(Sql(absl::StrCat("SELECT move FROM moves WHERE match_id = ", key.first,
                               " AND ply = ", key.second)),
              move);
  }
  // The bot matches went on through the restarts and none ended for a failure.
  for (int64_t id : bot_matches) {
    v1::Match m = WaitMatch(lobbies[0].get(), id, [](const v1::Match& m) {
      return m.status() == v1::MATCH_STATUS_FINISHED;
    });
    EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
    EXPECT_EQ(m.result().reason(), v1::END_REASON_RULES);
  }
  for (LobbyInstance& l : lobbies)
    EXPECT_EQ(Metric(l, "ply_lobby_duplicate_bot_requests_total"), 0);
}

}  // namespace
}  // namespace ply
