// The database fails over under play: PostgreSQL as a Patroni cluster of two nodes with a
// synchronous standby (deploy/local/pg-ha, one etcd member), one ply-lobby whose
// --database_url names both nodes, and players driving human-vs-human Connect Four matches over
// gRPC. The primary server is lost (SIGKILL of its Patroni and its postmaster), it rejoins as a
// standby, then the primary is switched over cleanly. Every acknowledged move must be on the
// primary at the end, no move sent again after a lost answer may be refused though stored, and
// play must go on after each event. Skipped, with a message saying so, where Patroni or etcd is
// not installed (deploy/install-deps.sh --ha installs them; CI does).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "engine/core/random.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/postgres_helper.h"
#include "tests/process_helper.h"

namespace ply {
namespace {

using ::ply::testing::ServerProcess;

const std::string kPgHa = std::string(PLY_SOURCE_DIR) + "/deploy/local/pg-ha";

// Runs a shell command; its standard output and exit status.
std::pair<std::string, int> Shell(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return {"", -1};
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), p)) > 0) out.append(buffer.data(), n);
  const int status = pclose(p);
  return {std::string(absl::StripTrailingAsciiWhitespace(out)),
          WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

bool Installed(const std::string& program) {
  return Shell(absl::StrCat("command -v ", program, " >/dev/null 2>&1")).second == 0;
}

struct Ack {
  int64_t match = 0;
  int ply = 0;
  std::string move;
};

class DbFailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Installed("patroni") || !Installed("etcd")) {
      GTEST_SKIP() << "Patroni and etcd are not installed, so the database failover is NOT "
                      "tested here: deploy/install-deps.sh --ha installs them (CI does)";
    }
    char dir[] = "/tmp/ply-ha-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    // A watchdog stops the cluster and removes its folder once this process is gone, however
    // it ends (a ctest timeout, ^C).
    Shell(absl::StrCat("nohup sh -c 'while kill -0 ", getpid(), " 2>/dev/null; do sleep 1; done; ",
                       kPgHa, " stop ", dir_, "; rm -rf ", dir_, "' </dev/null >/dev/null 2>&1 &"));
    // The cluster's ports: P+1, P+2 (PostgreSQL), P+21, P+22 (Patroni), P+41, P+42 (etcd).
    // Below the kernel's range of ephemeral ports (32768 and up), so that a node that comes back
    // finds its ports free.
    const int base = 10000 + static_cast<int>(getpid() % 350) * 60;
    const auto [out, rc] = Shell(absl::StrCat(kPgHa, " start ", dir_, " --port ", base, " 2>&1"));
    ASSERT_EQ(rc, 0) << "the Patroni cluster did not start:\n" << out << "\n" << Diagnosis();
    url_ = Shell(absl::StrCat(kPgHa, " url ", dir_)).first;
    auto bot = ServerProcess::Start(PLY_BOT_BINARY, {"--port=0", "--host=127.0.0.1", "--workers=1",
                                                     "--tt_mb=4", "--log_level=error"});
    ASSERT_TRUE(bot.ok()) << bot.status();
    bot_ = *std::move(bot);
    auto lobby =
        ServerProcess::Start(PLY_LOBBY_BINARY,
                             {"--port=0", "--host=127.0.0.1", absl::StrCat("--database_url=", url_),
                              absl::StrCat("--bot_target=", bot_->address()), "--bot_pacing_ms=100",
                              "--client_limit_exempt=127.0.0.1"},
                             absl::Seconds(30));
    ASSERT_TRUE(lobby.ok()) << lobby.status();
    lobby_ = *std::move(lobby);
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
    stub_ = v1::LobbyService::NewStub(
        grpc::CreateCustomChannel(lobby_->address(), grpc::InsecureChannelCredentials(), args));
  }

  void TearDown() override {
    stop_ = true;
    for (std::thread& t : players_) t.join();
    lobby_.reset();
    if (!dir_.empty()) {
      Shell(absl::StrCat(kPgHa, " stop ", dir_, " >/dev/null 2>&1"));
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }

  grpc::Status Call(const std::function<grpc::Status(grpc::ClientContext*)>& f,
                    const std::string& token = "") {
    grpc::ClientContext c;
    c.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    if (!token.empty()) c.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    return f(&c);
  }

  // Plays human-vs-human Connect Four matches until `stop_`. A move whose answer is lost
  // (UNAVAILABLE, DEADLINE_EXCEEDED) is sent again, as the clients do.
  void Play(int player) {
    Rng rng(static_cast<uint64_t>(player) + 11);
    while (!stop_) {
      v1::CreateMatchRequest create;
      create.mutable_spec()->set_name("connect4");
      create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
      create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
      create.set_take_seat(0);
      create.set_display_name(absl::StrCat("a", player));
      v1::CreateMatchResponse created;
      if (grpc::Status s = Call([&](auto* c) { return stub_->CreateMatch(c, create, &created); });
          !s.ok()) {
        Note(absl::StrCat("CreateMatch: ", s.error_message()));
        absl::SleepFor(absl::Milliseconds(100));
        continue;
      }
      const int64_t id = created.match().id();
      v1::JoinMatchRequest join;
      join.set_match_id(id);
      join.set_seat(1);
      join.set_display_name(absl::StrCat("b", player));
      v1::JoinMatchResponse joined;
      if (grpc::Status s = Call([&](auto* c) { return stub_->JoinMatch(c, join, &joined); });
          !s.ok()) {
        Note(absl::StrCat("JoinMatch: ", s.error_message()));
        continue;
      }
      const std::string tokens[2] = {created.seat_token(), joined.seat_token()};
      v1::Match m = joined.match();
      while (!stop_ && m.status() == v1::MATCH_STATUS_ACTIVE) {
        v1::MakeMoveRequest move;
        move.set_match_id(id);
        move.set_expected_ply(m.moves_size());
        move.set_move(m.legal_moves(static_cast<int>(rng.Below(m.legal_moves_size()))));
        const std::string& token = tokens[m.to_move()];
        bool resent = false;
        for (;;) {
          v1::MakeMoveResponse r;
          grpc::Status s = Call([&](auto* c) { return stub_->MakeMove(c, move, &r); }, token);
          if (s.ok()) {
            std::lock_guard<std::mutex> lock(mu_);
            acks_.push_back({id, r.move().ply(), r.move().move()});
            ack_times_.push_back(absl::Now());
            last_ack_ = absl::Now();
            m = r.match();
            break;
          }
          if (s.error_code() == grpc::StatusCode::UNAVAILABLE ||
              s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
            resent = true;
            {
              std::lock_guard<std::mutex> lock(mu_);
              ++unknown_;
            }
            absl::SleepFor(absl::Milliseconds(100));
            if (stop_) break;
            continue;
          }
          Note(absl::StrCat("MakeMove: ", s.error_message()));
          if (resent) {
            std::lock_guard<std::mutex> lock(mu_);
            refused_resends_.push_back({id, move.expected_ply() + 1, move.move()});
          }
          v1::GetMatchRequest get;
          get.set_match_id(id);
          while (!stop_ && !Call([&](auto* c) { return stub_->GetMatch(c, get, &m); }).ok()) {
            absl::SleepFor(absl::Milliseconds(100));
          }
          break;
        }
        absl::SleepFor(absl::Milliseconds(20));
      }
    }
  }

  // Keeps one bot-vs-bot match going until `stop_` (the lobby drives it: its ownership is an
  // advisory lock on the primary, which a failover takes away), noting when it moves on and
  // how each one ended.
  void WatchBots() {
    while (!stop_) {
      v1::CreateMatchRequest create;
      create.mutable_spec()->set_name("connect4");
      for (int i = 0; i < 2; ++i) {
        v1::SeatSpec* seat = create.add_seats();
        seat->set_kind(v1::SEAT_KIND_BOT);
        seat->set_difficulty("beginner");
      }
      v1::CreateMatchResponse created;
      if (!Call([&](auto* c) { return stub_->CreateMatch(c, create, &created); }).ok()) {
        absl::SleepFor(absl::Milliseconds(100));
        continue;
      }
      v1::GetMatchRequest get;
      get.set_match_id(created.match().id());
      int ply = 0;
      while (!stop_) {
        v1::Match m;
        if (Call([&](auto* c) { return stub_->GetMatch(c, get, &m); }).ok()) {
          std::lock_guard<std::mutex> lock(mu_);
          if (m.moves_size() > ply) {
            ply = m.moves_size();
            bot_moved_ = absl::Now();
          }
          if (m.status() == v1::MATCH_STATUS_FINISHED) {
            if (m.result().reason() != v1::END_REASON_RULES) ++bot_matches_failed_;
            ++bot_matches_ended_;
            break;
          }
        }
        absl::SleepFor(absl::Milliseconds(100));
      }
    }
  }

  // Waits until a bot match moves after `since`; the time it took.
  absl::Duration WaitForBotMove(absl::Time since) {
    const absl::Time give_up = absl::Now() + absl::Seconds(60);
    while (absl::Now() < give_up) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (bot_moved_ > since) return bot_moved_ - since;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return absl::InfiniteDuration();
  }

  // The last error a player saw, for a failure's message.
  void Note(const std::string& error) {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = error;
  }

  // What the cluster says of itself, for a failure's message.
  std::string Diagnosis() {
    std::string last_error;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_error = last_error_;
    }
    return absl::StrCat("the last error a player saw: ", last_error, "\n",
                        Shell(absl::StrCat(kPgHa, " status ", dir_, " 2>&1; tail -n 15 ", dir_,
                                           "/pg*.log ", dir_, "/etcd*.log 2>&1"))
                            .first);
  }

  size_t AckCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return acks_.size();
  }

  // The longest time between two acknowledgements from the `from`th on (the pause an event
  // caused, with three players moving all the time).
  absl::Duration LongestPause(size_t from) {
    std::lock_guard<std::mutex> lock(mu_);
    absl::Duration longest = absl::ZeroDuration();
    for (size_t i = std::max<size_t>(from, 1); i < ack_times_.size(); ++i) {
      longest = std::max(longest, ack_times_[i] - ack_times_[i - 1]);
    }
    return longest;
  }

  // Waits until `more` moves beyond `from` are acknowledged; the time it took from `since`.
  absl::Duration WaitForAcks(size_t from, size_t more, absl::Time since) {
    const absl::Time give_up = absl::Now() + absl::Seconds(60);
    absl::Time first = absl::InfiniteFuture();
    while (absl::Now() < give_up) {
      const size_t n = AckCount();
      if (n > from && first == absl::InfiniteFuture()) first = absl::Now();
      if (n >= from + more) break;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return first - since;
  }

  // (match, ply) -> move, as the primary holds them now.
  std::map<std::pair<int64_t, int>, std::string> StoredMoves() {
    std::map<std::pair<int64_t, int>, std::string> stored;
    const auto [out, rc] = Shell(
        absl::StrCat("psql -X \"", url_, "\" -Atc \"SELECT match_id, ply, move FROM moves\""));
    EXPECT_EQ(rc, 0) << "cannot read the moves from the primary";
    for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
      std::vector<std::string> f = absl::StrSplit(line, '|');
      int64_t match = 0;
      int ply = 0;
      if (f.size() == 3 && absl::SimpleAtoi(f[0], &match) && absl::SimpleAtoi(f[1], &ply)) {
        stored[{match, ply}] = f[2];
      }
    }
    return stored;
  }

  std::string dir_;
  std::string url_;
  std::unique_ptr<ServerProcess> bot_;
  std::unique_ptr<ServerProcess> lobby_;
  std::unique_ptr<v1::LobbyService::Stub> stub_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> players_;
  std::mutex mu_;
  std::vector<Ack> acks_;
  std::vector<absl::Time> ack_times_;
  std::vector<Ack> refused_resends_;
  int64_t unknown_ = 0;
  std::string last_error_;
  absl::Time last_ack_;
  absl::Time bot_moved_ = absl::InfinitePast();
  int bot_matches_ended_ = 0;
  int bot_matches_failed_ = 0;
};

TEST_F(DbFailoverTest, EveryAcknowledgedMoveIsOnTheNewPrimaryAfterAKillAndASwitchover) {
  for (int i = 0; i < 3; ++i) players_.emplace_back([this, i] { Play(i); });
  players_.emplace_back([this] { WatchBots(); });
  WaitForAcks(0, 30, absl::Now());
  ASSERT_GE(AckCount(), 30u) << "too little play before the kill\n" << Diagnosis();

  // The primary server is lost.
  const std::string first_primary = Shell(absl::StrCat(kPgHa, " primary ", dir_)).first;
  const size_t before_kill = AckCount();
  const absl::Time killed = absl::Now();
  const std::string lost = Shell(absl::StrCat(kPgHa, " kill-primary ", dir_)).first;
  ASSERT_EQ(lost, first_primary);
  const absl::Duration kill_pause = WaitForAcks(before_kill, 30, killed);
  ASSERT_LT(kill_pause, absl::Seconds(30)) << "no move acknowledged after the primary was lost\n"
                                           << Diagnosis();
  const absl::Duration bot_kill_pause = WaitForBotMove(killed + kill_pause);
  EXPECT_LT(bot_kill_pause, absl::Seconds(30)) << "the bot match stopped after the failover";
  const absl::Duration kill_gap = LongestPause(before_kill);
  const std::string second_primary = Shell(absl::StrCat(kPgHa, " primary ", dir_)).first;
  EXPECT_NE(second_primary, first_primary);
  EXPECT_FALSE(second_primary.empty());

  // The lost server rejoins as a standby; then a clean switchover back.
  ASSERT_EQ(Shell(absl::StrCat(kPgHa, " restart ", dir_, " ", lost)).second, 0);
  ASSERT_EQ(Shell(absl::StrCat(kPgHa, " wait ", dir_, " 90")).second, 0)
      << "the lost server did not rejoin as a synchronous standby\n"
      << Diagnosis();
  const size_t before_switch = AckCount();
  const absl::Time switched = absl::Now();
  const auto [candidate, rc] = Shell(absl::StrCat(kPgHa, " switchover ", dir_, " 2>&1"));
  ASSERT_EQ(rc, 0) << candidate;
  const absl::Duration switch_pause = WaitForAcks(before_switch, 30, switched);
  ASSERT_LT(switch_pause, absl::Seconds(30)) << "no move acknowledged after the switchover\n"
                                             << Diagnosis();
  EXPECT_LT(WaitForBotMove(switched + switch_pause), absl::Seconds(30))
      << "the bot match stopped after the switchover";
  const absl::Duration switch_gap = LongestPause(before_switch);
  // Play on a little, then stop and compare with what the primary holds.
  WaitForAcks(AckCount(), 10, absl::Now());
  stop_ = true;
  for (std::thread& t : players_) t.join();
  players_.clear();
  EXPECT_EQ(Shell(absl::StrCat(kPgHa, " primary ", dir_)).first, candidate);

  const std::map<std::pair<int64_t, int>, std::string> stored = StoredMoves();
  int lost_moves = 0;
  for (const Ack& a : acks_) {
    auto it = stored.find({a.match, a.ply});
    if (it == stored.end() || it->second != a.move) ++lost_moves;
  }
  int false_refusals = 0;
  for (const Ack& r : refused_resends_) {
    auto it = stored.find({r.match, r.ply});
    if (it != stored.end() && it->second == r.move) ++false_refusals;
  }
  std::printf(
      "db failover: %zu moves acknowledged, %d lost, %lld answers lost and the move sent again, "
      "%zu refused when sent again (%d of them stored); longest pause in play: %.1f s around "
      "the kill of the primary, %.1f s around the switchover; bot matches: %d ended, %d of "
      "them not by the rules\n",
      acks_.size(), lost_moves, static_cast<long long>(unknown_), refused_resends_.size(),
      false_refusals, absl::ToDoubleSeconds(kill_gap), absl::ToDoubleSeconds(switch_gap),
      bot_matches_ended_, bot_matches_failed_);
  EXPECT_EQ(lost_moves, 0);
  EXPECT_EQ(false_refusals, 0);
  EXPECT_EQ(bot_matches_failed_, 0) << "a bot match was ended by the failover";
}

}  // namespace
}  // namespace ply
