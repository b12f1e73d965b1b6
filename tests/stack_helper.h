// A test fixture for suites that need the system's back end: one throwaway PostgreSQL cluster
// and two ply-bot processes for the whole suite (bots are stateless), and a fresh database per
// test (NewDatabase). Tests start their own ply-lobby on it.
#ifndef PLY_TESTS_STACK_HELPER_H_
#define PLY_TESTS_STACK_HELPER_H_

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
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

  inline static PostgresCluster* cluster_ = nullptr;
  inline static ServerProcess* bots_[2] = {nullptr, nullptr};
  inline static int databases_ = 0;
};

}  // namespace ply::testing

#endif  // PLY_TESTS_STACK_HELPER_H_
