// A test fixture for suites that need the system's back end: one throwaway PostgreSQL cluster
// and two ply-bot processes for the whole suite (bots are stateless), a fresh database per test
// (NewDatabase), and a ply-lobby on it with a stub to call it (StartLobby).
#ifndef PLY_TESTS_STACK_HELPER_H_
#define PLY_TESTS_STACK_HELPER_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/postgres_helper.h"
#include "tests/process_helper.h"

namespace ply::testing {

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
  // "--bot_target=ipv4:..." naming both bots.
  static std::string BotTargetFlag() {
    return absl::StrCat("--bot_target=ipv4:", bots_[0]->address(), ",", bots_[1]->address());
  }

  // Starts ply-lobby on the database `url_` (any free port, both bots, no bot pacing); flags in
  // `extra` come after those and override them. Sets `lobby_` and `stub_`.
  void StartLobby(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--port=0", "--host=127.0.0.1",
                                     absl::StrCat("--database_url=", url_), BotTargetFlag(),
                                     "--bot_pacing_ms=0"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto lobby = ServerProcess::Start(PLY_LOBBY_BINARY, args);
    ASSERT_TRUE(lobby.ok()) << lobby.status();
    lobby_ = *std::move(lobby);
    stub_ = v1::LobbyService::NewStub(lobby_->channel());
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

  std::string url_;
  std::unique_ptr<ServerProcess> lobby_;
  std::unique_ptr<v1::LobbyService::Stub> stub_;

  inline static PostgresCluster* cluster_ = nullptr;
  inline static ServerProcess* bots_[2] = {nullptr, nullptr};
  inline static int databases_ = 0;
};

}  // namespace ply::testing

#endif  // PLY_TESTS_STACK_HELPER_H_
