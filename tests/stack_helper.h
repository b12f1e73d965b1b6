// A test fixture for suites that need the system's back end: one throwaway PostgreSQL cluster
// and two ply-bot processes for the whole suite (bots are stateless), a fresh database per test
// (NewDatabase, or UseNewDatabase with Sql to query it), and a ply-lobby on it with a stub to
// call it (StartLobby), or as many as a test likes (StartLobbyInstance); and LobbyFixture, the
// lobby suites' fixture over it.
#ifndef PLY_TESTS_STACK_HELPER_H_
#define PLY_TESTS_STACK_HELPER_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/postgres_helper.h"
#include "tests/process_helper.h"

namespace ply::testing {

// One ply-lobby process and a stub to call it; `metrics_port` when it serves /metrics.
struct LobbyInstance {
  std::unique_ptr<ServerProcess> process;
  std::unique_ptr<v1::LobbyService::Stub> stub;
  int metrics_port = 0;
  v1::LobbyService::Stub* get() { return stub.get(); }
  v1::LobbyService::Stub* operator->() { return stub.get(); }
};

class StackFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto cluster = PostgresCluster::Start();
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = cluster->release();
    for (int i = 0; i < 2; ++i) {
      auto bot = ServerProcess::Start(
          PLY_BOT_BINARY, {"--port=0", "--host=127.0.0.1", "--workers=1", "--queue=8", "--tt_mb=4",
                           "--log_level=error", absl::StrCat("--instance=bot", i)});
      ASSERT_TRUE(bot.ok()) << bot.status();
      bots_[i] = bot->release();
    }
  }
  static void TearDownTestSuite() {
    for (ServerProcess*& b : bots_) {
      delete b;
      b = nullptr;
    }
    delete cluster_;
    cluster_ = nullptr;
  }

  // A new, empty database named `prefix` + a counter: its connection string.
  static absl::StatusOr<std::string> NewDatabase(const std::string& prefix) {
    if (cluster_ == nullptr) return absl::FailedPreconditionError("no PostgreSQL cluster");
    return cluster_->CreateDatabase(absl::StrCat(prefix, "_", ++databases_));
  }
  // A new, empty database for this test (`prefix` + a counter): sets `db_` and `url_`.
  void UseNewDatabase(const std::string& prefix) {
    ASSERT_NE(cluster_, nullptr);
    db_ = absl::StrCat(prefix, "_", ++databases_);
    auto url = cluster_->CreateDatabase(db_);
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
  }
  // A query's answer on the database UseNewDatabase made.
  std::string Sql(const std::string& sql) { return cluster_->Query(db_, sql); }

  // "--bot_target=ipv4:..." naming both bots.
  static std::string BotTargetFlag() {
    return absl::StrCat("--bot_target=ipv4:", bots_[0]->address(), ",", bots_[1]->address());
  }

  // Starts ply-lobby on the database `url_` (any free port, both bots, no bot pacing); flags in
  // `extra` come after those and override them. Sets `lobby_` and `stub_`.
  void StartLobby(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> flags = {BotTargetFlag(), "--bot_pacing_ms=0"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    LobbyInstance lobby = StartLobbyInstance(flags);
    ASSERT_NE(lobby.process, nullptr);
    lobby_ = std::move(lobby.process);
    stub_ = std::move(lobby.stub);
  }

  // Starts a ply-lobby on the database `url_` (any free port) with `flags` after those, for
  // suites that run several instances or their own flags. A failed start fails the test and
  // returns an instance without a process.
  LobbyInstance StartLobbyInstance(const std::vector<std::string>& flags) const {
    std::vector<std::string> args = {"--port=0", "--host=127.0.0.1",
                                     absl::StrCat("--database_url=", url_)};
    args.insert(args.end(), flags.begin(), flags.end());
    LobbyInstance lobby;
    auto process = ServerProcess::Start(PLY_LOBBY_BINARY, args);
    EXPECT_TRUE(process.ok()) << process.status();
    if (!process.ok()) return lobby;
    lobby.process = *std::move(process);
    lobby.stub = v1::LobbyService::NewStub(lobby.process->channel());
    // The ready line names the metrics page when there is one: "... metrics http://HOST:PORT/".
    const std::string& ready = lobby.process->ready_line();
    const size_t at = ready.find("metrics http://");
    if (at != std::string::npos) {
      std::string rest = ready.substr(at + 15);
      rest = rest.substr(rest.find(':') + 1);
      (void)absl::SimpleAtoi(rest.substr(0, rest.find('/')), &lobby.metrics_port);
    }
    return lobby;
  }

  // GetMatch; a failed call fails the test.
  v1::Match Get(int64_t id) {
    v1::GetMatchRequest request;
    request.set_match_id(id);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    v1::Match match;
    grpc::Status s = stub_->GetMatch(&context, request, &match);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return match;
  }

  std::string db_;
  std::string url_;
  std::unique_ptr<ServerProcess> lobby_;
  std::unique_ptr<v1::LobbyService::Stub> stub_;

  inline static PostgresCluster* cluster_ = nullptr;
  inline static ServerProcess* bots_[2] = {nullptr, nullptr};
  inline static int databases_ = 0;
};

// The fixture of the lobby's end-to-end suites (lobby_test, lobby_clock_test): a database and a
// ply-lobby of its own for each test, and the calls they make on `stub_`.
class LobbyFixture : public StackFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(UseNewDatabase("lobby"));
    StartLobby();
  }

  // The test's lobby started again with a bot target that has no server behind it, giving up on
  // a bot after `give_up_s`.
  void RestartLobbyWithoutBots(int give_up_s) {
    lobby_.reset();
    StartLobby({absl::StrCat("--bot_target=127.0.0.1:", FreePort()),
                absl::StrCat("--bot_give_up_s=", give_up_s)});
  }

  grpc::Status Create(const std::string& game, std::vector<v1::SeatKind> kinds,
                      std::vector<std::string> levels, v1::CreateMatchResponse* out,
                      std::function<void(v1::CreateMatchRequest&)> more = nullptr) {
    return ::ply::testing::Create(stub_.get(), game, std::move(kinds), std::move(levels), out,
                                  std::move(more));
  }

  // A human-vs-human match with both seats taken (lobby_helper.h's): the two tokens.
  std::pair<int64_t, std::pair<std::string, std::string>> HumanMatch(
      const std::string& game, std::function<void(v1::CreateMatchRequest&)> more = nullptr) {
    HumanSeats seats = ::ply::testing::HumanMatch(stub_.get(), stub_.get(), game, more);
    return {seats.id, {seats.tokens[0], seats.tokens[1]}};
  }

  grpc::Status Join(int64_t id, int seat, const std::string& name, v1::JoinMatchResponse* out) {
    return ::ply::testing::Join(stub_.get(), id, seat, name, out);
  }

  grpc::Status Move(int64_t id, int ply, const std::string& move, const std::string& token,
                    v1::MakeMoveResponse* out = nullptr) {
    return ::ply::testing::Move(stub_.get(), id, ply, move, token, out);
  }

  // A person holding `seat` (playing the first legal move each turn) against a bot, to the end.
  v1::Match PlayAgainstBot(int64_t id, const std::string& token, int seat) {
    for (;;) {
      v1::Match m = WaitMatch(id, [seat](const v1::Match& m) {
        return m.status() == v1::MATCH_STATUS_FINISHED || m.to_move() == seat;
      });
      if (m.status() == v1::MATCH_STATUS_FINISHED) return m;
      EXPECT_EQ(m.to_move(), seat);
      EXPECT_GT(m.legal_moves_size(), 0);
      grpc::Status s = Move(id, m.moves_size(), m.legal_moves(0), token);
      EXPECT_TRUE(s.ok()) << s.error_message();
      if (!s.ok()) return m;
    }
  }

  // Polls GetMatch until `done` holds (or `timeout` passes): lobby_helper.h's, on this lobby.
  v1::Match WaitMatch(int64_t id, const std::function<bool(const v1::Match&)>& done,
                      absl::Duration timeout = absl::Seconds(60)) {
    return ::ply::testing::WaitMatch(stub_.get(), id, done, timeout);
  }
};

}  // namespace ply::testing

#endif  // PLY_TESTS_STACK_HELPER_H_
