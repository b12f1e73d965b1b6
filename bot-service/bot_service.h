// The BotService implementation behind ply-bot: validates a request, queues it for a search
// worker and finishes the call from that worker. A search never runs on a gRPC thread.
//
// Budget: the search gets min(level's time, requested budget, deadline - now - margin), computed
// when a worker picks the request up, so time spent in the queue counts against the deadline.
// The reply carries the best move of the last completed iteration (or, when not even depth 1
// fits, the first move of the game's move order).
//
// Cancellation: when the caller cancels or disconnects (or its deadline passes), OnCancel raises
// the search's stop flag, which the search reads at every node; the worker is free again at once.
#ifndef PLY_BOT_SERVICE_BOT_SERVICE_H_
#define PLY_BOT_SERVICE_BOT_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "bot-service/metrics.h"
#include "bot-service/worker_pool.h"
#include "engine/registry/any_game.h"
#include "ply/v1/bot.grpc.pb.h"

namespace ply::bot {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };
// "error", "warning", "info" or "debug".
absl::StatusOr<LogLevel> ParseLogLevel(std::string_view text);

struct BotServiceOptions {
  // Names this instance in replies and logs.
  std::string instance;
  // Largest budget_ms a request may ask for.
  int64_t max_budget_ms = 30000;
  // Time kept back from the deadline for stopping the search, building the reply and the
  // network; at most a quarter of the time left, so that short deadlines still get a search.
  int64_t deadline_margin_ms = 20;
  LogLevel log_level = LogLevel::kInfo;
  // When set, every BotService call must carry "authorization: Bearer <auth_token>" metadata
  // (the health service stays open for probes).
  std::string auth_token;
};

// The metadata key a token travels in, and what precedes the token in its value.
inline constexpr char kAuthMetadataKey[] = "authorization";
inline constexpr char kAuthScheme[] = "Bearer ";

// Request size limits: past them a request is refused with INVALID_ARGUMENT.
inline constexpr int kMaxHistoryMoves = 10000;
inline constexpr int kMaxOptions = 32;
inline constexpr size_t kMaxTextBytes = 64;

// The search budget in milliseconds: min(level_ms, requested_ms, max_budget_ms, time left to the
// deadline minus the margin), where requested_ms = 0 means "the level's own" and a level_ms of 0
// means none. `remaining_ms` is deadline - now (nullopt without a deadline). 0 means not even a
// shallow search fits: answer from the move order.
int64_t SearchBudgetMs(int64_t level_ms, int64_t requested_ms, std::optional<int64_t> remaining_ms,
                       int64_t margin_ms, int64_t max_budget_ms);

// A request checked and replayed, ready for a worker.
struct PreparedSearch {
  std::unique_ptr<AnyGame> game;
  Difficulty level;
  int64_t requested_ms = 0;
  int64_t max_nodes = 0;
  uint64_t seed = 0;
  Priority priority = Priority::kInteractive;
  // An analysis request's played move (ChooseMoveRequest.judge_move), checked legal; may be empty.
  std::string judge_move;
};

// INVALID_ARGUMENT or FAILED_PRECONDITION, with a sentence, for anything a search cannot start
// from: unknown game, option or difficulty; bad, illegal or too many moves; a finished position;
// a budget out of range; an unknown priority. Errors never carry a field of the request whole:
// texts are bounded first, and what is echoed has its control characters escaped.
absl::StatusOr<PreparedSearch> PrepareSearch(const v1::ChooseMoveRequest& request,
                                             int64_t max_budget_ms);

// The Prometheus text of a metrics snapshot `m` (its prometheus_text aside): counters and
// integer gauges printed as integers, exactly, and the other values with 15 significant
// digits; the search-time summary's _sum (ms) and _count cover every search answered since the
// start, its quantiles the last 4096.
std::string PrometheusText(const v1::GetMetricsResponse& m, double search_ms_sum,
                           int64_t search_count);

class BotServiceImpl final : public v1::BotService::CallbackService {
 public:
  // `pool` runs the searches and outlives the service.
  BotServiceImpl(BotServiceOptions options, WorkerPool* pool);

  grpc::ServerUnaryReactor* ChooseMove(grpc::CallbackServerContext* context,
                                       const v1::ChooseMoveRequest* request,
                                       v1::ChooseMoveResponse* response) override;
  grpc::ServerUnaryReactor* ListGames(grpc::CallbackServerContext* context,
                                      const v1::ListGamesRequest* request,
                                      v1::ListGamesResponse* response) override;
  grpc::ServerUnaryReactor* GetMetrics(grpc::CallbackServerContext* context,
                                       const v1::GetMetricsRequest* request,
                                       v1::GetMetricsResponse* response) override;

  // From now on new ChooseMove calls get UNAVAILABLE; searches already accepted go on.
  void StartDraining() { draining_ = true; }

  // Renames the instance (used once the server knows the port the system chose for it).
  void SetInstance(std::string name);
  std::string Instance() const;

  v1::GetMetricsResponse MetricsSnapshot() const;

 private:
  struct Job;
  class ChooseMoveReactor;

  void RunJob(Job& job, SearchCache& cache);
  // OK, or UNAUTHENTICATED when a token is required and the call lacks it.
  grpc::Status Authenticate(const grpc::CallbackServerContext& context) const;
  void Log(LogLevel level, std::string_view line) const;

  BotServiceOptions options_;
  mutable std::mutex instance_mu_;
  WorkerPool* const pool_;
  std::atomic<bool> draining_{false};
  Metrics metrics_;
};

}  // namespace ply::bot

#endif  // PLY_BOT_SERVICE_BOT_SERVICE_H_
