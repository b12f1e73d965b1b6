// What an operator reads about one ply-lobby instance, as Prometheus text (GET /metrics on
// --metrics_port): calls by method and status, MakeMove latency, moves committed, matches,
// watchers, ownership of matches among instances, notifications from other instances and their
// lag, database trouble, bot calls. Counters are lock-free; histograms have fixed buckets.
#ifndef PLY_LOBBY_SERVER_METRICS_H_
#define PLY_LOBBY_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ply::lobby {

// A Prometheus histogram over fixed upper bounds (in the unit of its name).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // The histogram's lines (`_bucket`, `_sum`, `_count`) under `name`.
  void Render(absl::string_view name, absl::string_view help, std::string* out) const;
  // The p-th percentile (0-100) as the upper bound of the bucket it falls in.
  double Percentile(double p) const;
  int64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  const std::vector<double> bounds_;
  // One per bound, plus +Inf.
  std::vector<std::atomic<int64_t>> buckets_;
  std::atomic<int64_t> count_{0};
  // Micro-units, so that the sum stays an integer.
  std::atomic<int64_t> sum_micros_{0};
};

// The lobby's RPC methods, as counted.
enum class Method : int {
  kListGames,
  kCreateMatch,
  kListMatches,
  kGetMatch,
  kJoinMatch,
  kMakeMove,
  kResign,
  kOfferDraw,
  kWatchMatch,
  kLogin,
  kGetPlayer,
  kListPlayerMatches,
  kLeaderboard,
  kPair,
  kClaimVictory,
  kHere,
  kOfferRematch,
  kAnalyzeMatch,
  kCount
};
absl::string_view MethodName(Method m);

struct LobbyMetrics {
  LobbyMetrics();

  // Calls by method and gRPC status code (0-16).
  std::array<std::array<std::atomic<int64_t>, 17>, static_cast<int>(Method::kCount)> calls{};
  void CountCall(Method m, int code);
  // MakeMove from arrival to answer, in milliseconds.
  Histogram make_move_ms;
  std::atomic<int64_t> moves_committed{0};
  // Matches whose timed work this instance took over from an instance that died or left (or
  // found without an owner at start).
  std::atomic<int64_t> leases_taken{0};
  // From a change committed by another instance to the events sent to this one's watchers.
  Histogram peer_event_lag_ms;
  std::atomic<int64_t> resyncs{0};
  std::atomic<int64_t> bot_calls{0};
  std::atomic<int64_t> bot_failures{0};
  // Post-game analysis's calls to ply-bot (one a position judged, and one a try again), and
  // those every bot refused as busy (asked again later) or that failed.
  std::atomic<int64_t> analysis_bot_calls{0};
  std::atomic<int64_t> analysis_bot_busy{0};
  std::atomic<int64_t> analysis_bot_failures{0};
  // Bot requests for a ply another live instance had already asked for (should stay 0).
  std::atomic<int64_t> duplicate_bot_requests{0};
};

// Gauges read when the page is made.
struct LobbyGauges {
  int64_t cached_matches = 0;
  int64_t active_matches = 0;
  int64_t watchers = 0;
  int64_t leases_held = 0;
  int64_t peers = 0;
  int64_t notifications = 0;
  int64_t db_errors = 0;
  int64_t db_reconnects = 0;
  int64_t db_settled_moves = 0;
};

// The whole page.
std::string RenderMetrics(const LobbyMetrics& m, const LobbyGauges& g);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_METRICS_H_
