// What the tests of ply-bot processes share: starting one on a free loopback port, a
// ChooseMove request, and one call straight to one instance.
#ifndef PLY_TESTS_BOT_HELPER_H_
#define PLY_TESTS_BOT_HELPER_H_

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "ply/v1/bot.grpc.pb.h"
#include "tests/process_helper.h"

namespace ply::testing {

// ply-bot (PLY_BOT_BINARY, defined by the test's target) with `flags` after the defaults; null,
// and a failed expectation, when it does not start.
inline std::unique_ptr<ServerProcess> StartBot(std::vector<std::string> flags = {}) {
  std::vector<std::string> args = {"--host=127.0.0.1", "--port=0", "--log_level=warning",
                                   "--tt_mb=4"};
  args.insert(args.end(), flags.begin(), flags.end());
  absl::StatusOr<std::unique_ptr<ServerProcess>> bot = ServerProcess::Start(PLY_BOT_BINARY, args);
  EXPECT_TRUE(bot.ok()) << bot.status();
  return bot.ok() ? *std::move(bot) : nullptr;
}

inline v1::ChooseMoveRequest Request(const std::string& game, const std::vector<std::string>& moves,
                                     const std::string& level, int64_t budget_ms = 0) {
  v1::ChooseMoveRequest r;
  r.mutable_position()->mutable_spec()->set_name(game);
  for (const std::string& m : moves) r.mutable_position()->add_moves(m);
  r.set_difficulty(level);
  r.set_budget_ms(budget_ms);
  return r;
}

// One call straight to one instance, no retries.
inline grpc::Status Call(ServerProcess& bot, const v1::ChooseMoveRequest& request,
                         int64_t deadline_ms, v1::ChooseMoveResponse* response) {
  auto stub = v1::BotService::NewStub(bot.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
  return stub->ChooseMove(&context, request, response);
}

// Milliseconds since `t`.
inline double MsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// The instance's GetMetrics answer (a failed expectation when the call fails).
inline v1::GetMetricsResponse Metrics(ServerProcess& bot) {
  auto stub = v1::BotService::NewStub(bot.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::GetMetricsResponse response;
  EXPECT_TRUE(stub->GetMetrics(&context, v1::GetMetricsRequest(), &response).ok());
  return response;
}

// Polls the instance's metrics until `ready` holds (searching/queued counts settle a little
// after the calls are sent), for about `polls` times 10 ms.
template <class Pred>
bool WaitForMetrics(ServerProcess& bot, Pred ready, int polls = 200) {
  for (int i = 0; i < polls; ++i) {
    if (ready(Metrics(bot))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace ply::testing

#endif  // PLY_TESTS_BOT_HELPER_H_
