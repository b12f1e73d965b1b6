// Faults under load: human matches driven over gRPC and bot matches, each with a watcher, while
// the lobby is SIGKILLed and restarted, a ply-bot is SIGKILLed, PostgreSQL restarts, a ply-bot
// is paused past its deadline, and a watcher's stream is dropped. Afterwards every acknowledged
// move must be in the database exactly once, every match must reach a valid end without
// getting stuck, and every watcher must hold the database's moves and result. Prints a table:
// fault, matches affected (active when it struck), moves acknowledged (in the window that
// follows it), moves lost, and time to recover (from the fault until the kind of progress it
// stopped is seen again; for the paused bot, the 3 s pause is included).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "engine/core/random.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/postgres_helper.h"
#include "tests/process_helper.h"

namespace ply {
namespace {

using ::ply::testing::PostgresCluster;
using ::ply::testing::ServerProcess;

constexpr int kHumanDrivers = 3;
constexpr int kBotMatches = 3;

struct Ack {
  int64_t match = 0;
  int ply = 0;
  std::string move;
  int fault = 0;  // the fault window it was acknowledged in (0: before any)
};

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = PostgresCluster::Start();
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto url = cluster_->CreateDatabase("faults");
    ASSERT_TRUE(url.ok());
    url_ = *url;
    for (int i = 0; i < 2; ++i) StartBot(i, 0);
    lobby_port_ = ::ply::testing::FreePort();
    StartLobby();
  }

  void StartBot(int i, int port) {
    auto bot = ServerProcess::Start(
        PLY_BOT_BINARY,
        {absl::StrCat("--port=", port), "--host=127.0.0.1", "--workers=1", "--queue=8", "--tt_mb=4",
         "--log_level=error", absl::StrCat("--instance=bot", i)});
    ASSERT_TRUE(bot.ok()) << bot.status();
    bots_[i] = *std::move(bot);
  }

  void StartLobby() {
    auto lobby = ServerProcess::Start(
        PLY_LOBBY_BINARY,
        {absl::StrCat("--port=", lobby_port_), "--host=127.0.0.1",
         absl::StrCat("--database_url=", url_),
         absl::StrCat("--bot_target=ipv4:", bots_[0]->address(), ",", bots_[1]->address()),
         "--bot_pacing_ms=30", "--client_limit_exempt=127.0.0.1"},
        absl::Seconds(30));
    ASSERT_TRUE(lobby.ok()) << lobby.status();
    lobby_ = *std::move(lobby);
  }

  std::unique_ptr<v1::LobbyService::Stub> Stub() {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
    return v1::LobbyService::NewStub(grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", lobby_port_), grpc::InsecureChannelCredentials(), args));
  }

  static grpc::Status Call(const std::function<grpc::Status(grpc::ClientContext*)>& f,
                           const std::string& token = "") {
    grpc::ClientContext c;
    c.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    if (!token.empty()) c.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    return f(&c);
  }

  // Plays human-vs-human Connect Four matches, one after another, until `stop_`.
  void DriveHumans(int driver) {
    auto stub = Stub();
    Rng rng(static_cast<uint64_t>(driver) + 7);
    while (!stop_) {
      v1::CreateMatchRequest create;
      create.mutable_spec()->set_name("connect4");
      create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
      create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
      create.set_take_seat(0);
      create.set_display_name("a");
      v1::CreateMatchResponse created;
      if (!Call([&](auto* c) { return stub->CreateMatch(c, create, &created); }).ok()) {
        absl::SleepFor(absl::Milliseconds(100));
        continue;
      }
      const int64_t id = created.match().id();
      Register(id);
      std::string tokens[2] = {created.seat_token(), ""};
      while (!stop_ && tokens[1].empty()) {
        v1::JoinMatchRequest join;
        join.set_match_id(id);
        join.set_seat(1);
        join.set_display_name("b");
        v1::JoinMatchResponse joined;
        grpc::Status s = Call([&](auto* c) { return stub->JoinMatch(c, join, &joined); });
        if (s.ok()) tokens[1] = joined.seat_token();
        if (s.error_code() == grpc::StatusCode::ALREADY_EXISTS) break;  // lost its reply: give up
        if (!s.ok()) absl::SleepFor(absl::Milliseconds(100));
      }
      if (tokens[1].empty()) continue;
      for (;;) {
        v1::Match m;
        v1::GetMatchRequest get;
        get.set_match_id(id);
        if (!Call([&](auto* c) { return stub->GetMatch(c, get, &m); }).ok()) {
          absl::SleepFor(absl::Milliseconds(100));
          continue;
        }
        if (m.status() == v1::MATCH_STATUS_FINISHED) break;
        // Once the load stops, matches still play to their end.
        v1::MakeMoveRequest move;
        move.set_match_id(id);
        move.set_expected_ply(m.moves_size());
        move.set_move(m.legal_moves(static_cast<int>(rng.Below(m.legal_moves_size()))));
        v1::MakeMoveResponse r;
        grpc::Status s =
            Call([&](auto* c) { return stub->MakeMove(c, move, &r); }, tokens[m.to_move()]);
        if (s.ok()) {
          std::lock_guard<std::mutex> lock(mu_);
          acks_.push_back({id, r.move().ply(), r.move().move(), fault_.load()});
          last_human_ack_ = absl::Now();
        } else {
          absl::SleepFor(absl::Milliseconds(50));
        }
        absl::SleepFor(absl::Milliseconds(20));
      }
    }
  }

  // Keeps kBotMatches bot matches going until `stop_`, each with a reconnecting watcher.
  void DriveBots(int slot) {
    auto stub = Stub();
    while (!stop_) {
      v1::CreateMatchRequest create;
      create.mutable_spec()->set_name("connect4");
      for (const char* level : {"beginner", "easy"}) {
        v1::SeatSpec* seat = create.add_seats();
        seat->set_kind(v1::SEAT_KIND_BOT);
        seat->set_difficulty(level);
      }
      v1::CreateMatchResponse created;
      if (!Call([&](auto* c) { return stub->CreateMatch(c, create, &created); }).ok()) {
        absl::SleepFor(absl::Milliseconds(100));
        continue;
      }
      const int64_t id = created.match().id();
      Register(id);
      Watch(slot, id, *stub);
    }
  }

  // Watches match `id` to its end, reconnecting from the last ply seen whenever the stream
  // breaks (or `drop_watcher_` asks this slot to drop it).
  void Watch(int slot, int64_t id, v1::LobbyService::Stub& stub) {
    std::vector<std::string> seen;
    std::string result;
    const absl::Time give_up = absl::Now() + absl::Seconds(120);
    while (result.empty() && absl::Now() < give_up) {
      v1::WatchMatchRequest request;
      request.set_match_id(id);
      if (!seen.empty()) request.set_after_ply(static_cast<int>(seen.size()));
      grpc::ClientContext context;
      {
        std::lock_guard<std::mutex> lock(mu_);
        watch_contexts_[slot] = &context;
      }
      auto reader = stub.WatchMatch(&context, request);
      v1::MatchEvent e;
      while (reader->Read(&e)) {
        if (e.has_snapshot()) {
          seen.clear();
          for (const auto& m : e.snapshot().moves()) seen.push_back(m.move());
        } else if (e.has_move_applied()) {
          if (e.move_applied().move().ply() == static_cast<int>(seen.size()) + 1) {
            seen.push_back(e.move_applied().move().move());
            std::lock_guard<std::mutex> lock(mu_);
            last_bot_move_ = absl::Now();
          } else {
            std::lock_guard<std::mutex> lock(mu_);
            watcher_gaps_++;
          }
        } else if (e.has_game_over()) {
          result = e.game_over().result().SerializeAsString();
        }
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        watch_contexts_[slot] = nullptr;
      }
      grpc::Status s = reader->Finish();
      if (result.empty()) absl::SleepFor(absl::Milliseconds(100));
    }
    std::lock_guard<std::mutex> lock(mu_);
    watched_[id] = {seen, result};
  }

  void Register(int64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    matches_.insert(id);
  }

  std::unique_ptr<PostgresCluster> cluster_;
  std::string url_;
  std::unique_ptr<ServerProcess> bots_[2];
  std::unique_ptr<ServerProcess> lobby_;
  int lobby_port_ = 0;

  std::atomic<bool> stop_{false};
  std::atomic<int> fault_{0};
  std::mutex mu_;
  std::vector<Ack> acks_;
  std::set<int64_t> matches_;
  std::map<int64_t, std::pair<std::vector<std::string>, std::string>> watched_;
  grpc::ClientContext* watch_contexts_[kBotMatches] = {};
  absl::Time last_human_ack_ = absl::InfinitePast();
  absl::Time last_bot_move_ = absl::InfinitePast();
  int watcher_gaps_ = 0;
};

TEST_F(FaultTest, NoAcknowledgedMoveIsLostAndEveryMatchEnds) {
  std::vector<std::thread> load;
  for (int i = 0; i < kHumanDrivers; ++i) load.emplace_back([this, i] { DriveHumans(i); });
  for (int i = 0; i < kBotMatches; ++i) load.emplace_back([this, i] { DriveBots(i); });

  struct Fault {
    std::string name;
    std::function<void()> inject;
    // Which progress shows recovery: human acknowledgements or bot moves.
    bool human;
  };
  const int bot_port = bots_[0]->port();
  std::vector<Fault> faults = {
      {"SIGKILL ply-lobby, restart",
       [&] {
         lobby_->Signal(SIGKILL);
         lobby_->WaitExit(absl::Seconds(5));
         StartLobby();
       },
       true},
      {"SIGKILL one ply-bot",
       [&] {
         bots_[0]->Signal(SIGKILL);
         bots_[0]->WaitExit(absl::Seconds(5));
       },
       false},
      {"restart PostgreSQL",
       [&] {
         ASSERT_TRUE(cluster_->StopServer().ok());
         absl::SleepFor(absl::Milliseconds(500));
         ASSERT_TRUE(cluster_->StartServer().ok());
       },
       true},
      {"SIGSTOP the other ply-bot 3 s (past its deadline)",
       [&] {
         StartBot(0, bot_port);  // the killed one comes back, so bots can still move
         bots_[1]->Signal(SIGSTOP);
         absl::SleepFor(absl::Seconds(3));
         bots_[1]->Signal(SIGCONT);
       },
       false},
      {"drop every watcher's stream",
       [&] {
         std::lock_guard<std::mutex> lock(mu_);
         for (grpc::ClientContext* c : watch_contexts_) {
           if (c != nullptr) c->TryCancel();
         }
       },
       false},
  };
  struct Row {
    int affected = 0;
    double recover_s = -1;
  };
  std::vector<Row> rows(faults.size());
  absl::SleepFor(absl::Seconds(3));
  for (size_t f = 0; f < faults.size(); ++f) {
    rows[f].affected =
        std::stoi(cluster_->Query("faults", "SELECT count(*) FROM matches WHERE status = 2"));
    fault_ = static_cast<int>(f) + 1;
    const absl::Time start = absl::Now();
    faults[f].inject();
    const absl::Time injected = absl::Now();
    // Recovered when the kind of progress the fault stopped is seen again.
    while (absl::Now() - injected < absl::Seconds(30)) {
      absl::SleepFor(absl::Milliseconds(20));
      std::lock_guard<std::mutex> lock(mu_);
      const absl::Time last = faults[f].human ? last_human_ack_ : last_bot_move_;
      if (last > injected) {
        rows[f].recover_s = absl::ToDoubleSeconds(last - start);
        break;
      }
    }
    absl::SleepFor(absl::Seconds(2));
  }
  stop_ = true;
  for (std::thread& t : load) t.join();

  // The database against what was acknowledged and watched.
  std::map<std::pair<int64_t, int>, std::string> stored;
  const std::vector<std::string> lines =
      absl::StrSplit(cluster_->Query("faults", "SELECT match_id, ply, move FROM moves"), '\n');
  for (const std::string& line : lines) {
    std::vector<std::string> f = absl::StrSplit(line, '|');
    if (f.size() == 3) stored[{std::stoll(f[0]), std::stoi(f[1])}] = f[2];
  }
  std::vector<int> acked(faults.size() + 1, 0), lost(faults.size() + 1, 0);
  for (const Ack& a : acks_) {
    ++acked[a.fault];
    auto it = stored.find({a.match, a.ply});
    if (it == stored.end() || it->second != a.move) ++lost[a.fault];
  }
  std::printf(
      "\n| fault | matches affected | moves acknowledged | moves lost | time to recover |\n"
      "|---|---|---|---|---|\n");
  std::printf("| (before any fault) | - | %d | %d | - |\n", acked[0], lost[0]);
  for (size_t f = 0; f < faults.size(); ++f) {
    std::printf("| %s | %d | %d | %d | %s |\n", faults[f].name.c_str(), rows[f].affected,
                acked[f + 1], lost[f + 1],
                rows[f].recover_s < 0 ? "not recovered"
                                      : absl::StrFormat("%.2f s", rows[f].recover_s).c_str());
    EXPECT_GE(rows[f].recover_s, 0) << faults[f].name;
  }
  for (size_t f = 0; f <= faults.size(); ++f) EXPECT_EQ(lost[f], 0);
  EXPECT_GT(acks_.size(), 50u);

  // Every match ended with a valid result; none for a bot failure, none left active.
  const std::string unfinished = cluster_->Query("faults",
                                                 "SELECT count(*) FROM matches WHERE "
                                                 "status <> 3 AND open_seats = 0");
  EXPECT_EQ(unfinished, "0") << "matches left unfinished";
  EXPECT_EQ(cluster_->Query("faults",
                            "SELECT count(*) FROM matches WHERE end_reason NOT IN "
                            "(1, 2, 3, 4) AND status = 3"),
            "0");
  // Every move of a match exactly once: plies 1..n with no gap.
  EXPECT_EQ(cluster_->Query("faults",
                            "SELECT count(*) FROM (SELECT match_id FROM moves GROUP BY "
                            "match_id HAVING max(ply) <> count(*)) gaps"),
            "0");
  // Watchers hold the database's moves and its result.
  for (const auto& [id, watched] : watched_) {
    std::vector<std::string> db;
    for (int ply = 1; stored.count({id, ply}) > 0; ++ply) db.push_back(stored[{id, ply}]);
    EXPECT_EQ(watched.first, db) << "match " << id;
    EXPECT_FALSE(watched.second.empty()) << "match " << id << " watcher saw no end";
  }
  EXPECT_EQ(watcher_gaps_, 0);
  std::printf("%zu matches, %zu watched to the end, %zu human moves acknowledged\n",
              matches_.size(), watched_.size(), acks_.size());
}

}  // namespace
}  // namespace ply
