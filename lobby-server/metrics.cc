#include "lobby-server/metrics.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace ply::lobby {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(bounds_.size() + 1) {}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<int64_t>(std::llround(value * 1e6)), std::memory_order_relaxed);
}

void Histogram::Render(absl::string_view name, absl::string_view help, std::string* out) const {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " histogram\n");
  int64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    const std::string le = i < bounds_.size() ? absl::StrCat(bounds_[i]) : "+Inf";
    absl::StrAppend(out, name, "_bucket{le=\"", le, "\"} ", cumulative, "\n");
  }
  absl::StrAppend(out, name, "_sum ",
                  static_cast<double>(sum_micros_.load(std::memory_order_relaxed)) / 1e6, "\n");
  absl::StrAppend(out, name, "_count ", count_.load(std::memory_order_relaxed), "\n");
}

double Histogram::Percentile(double p) const {
  const int64_t total = count();
  if (total == 0) return 0;
  const double want = p / 100.0 * static_cast<double>(total);
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    if (static_cast<double>(cumulative) >= want) return bounds_[i];
  }
  return INFINITY;
}

absl::string_view MethodName(Method m) {
  switch (m) {
    case Method::kListGames:
      return "ListGames";
    case Method::kCreateMatch:
      return "CreateMatch";
    case Method::kListMatches:
      return "ListMatches";
    case Method::kGetMatch:
      return "GetMatch";
    case Method::kJoinMatch:
      return "JoinMatch";
    case Method::kMakeMove:
      return "MakeMove";
    case Method::kResign:
      return "Resign";
    case Method::kOfferDraw:
      return "OfferDraw";
    case Method::kWatchMatch:
      return "WatchMatch";
    case Method::kLogin:
      return "Login";
    case Method::kGetPlayer:
      return "GetPlayer";
    case Method::kListPlayerMatches:
      return "ListPlayerMatches";
    case Method::kLeaderboard:
      return "Leaderboard";
    case Method::kPair:
      return "Pair";
    case Method::kClaimVictory:
      return "ClaimVictory";
    case Method::kHere:
      return "Here";
    case Method::kOfferRematch:
      return "OfferRematch";
    case Method::kAnalyzeMatch:
      return "AnalyzeMatch";
    case Method::kCount:
      break;
  }
  return "unknown";
}

namespace {

constexpr const char* kCodeNames[17] = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

void Counter(absl::string_view name, absl::string_view help, int64_t value, std::string* out) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " counter\n", name, " ",
                  value, "\n");
}

void Gauge(absl::string_view name, absl::string_view help, int64_t value, std::string* out) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " gauge\n", name, " ", value,
                  "\n");
}

}  // namespace

LobbyMetrics::LobbyMetrics()
    : make_move_ms({0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500}),
      peer_event_lag_ms({1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 5000}) {}

void LobbyMetrics::CountCall(Method m, int code) {
  if (code < 0 || code > 16) code = 2;  // UNKNOWN
  calls[static_cast<int>(m)][code].fetch_add(1, std::memory_order_relaxed);
}

std::string RenderMetrics(const LobbyMetrics& m, const LobbyGauges& g) {
  std::string out;
  absl::StrAppend(&out,
                  "# HELP ply_lobby_calls_total Calls answered, by method and status code.\n"
                  "# TYPE ply_lobby_calls_total counter\n");
  for (int i = 0; i < static_cast<int>(Method::kCount); ++i) {
    for (int code = 0; code < 17; ++code) {
      const int64_t n = m.calls[i][code].load(std::memory_order_relaxed);
      if (n == 0) continue;
      absl::StrAppend(&out, "ply_lobby_calls_total{method=\"", MethodName(static_cast<Method>(i)),
                      "\",code=\"", kCodeNames[code], "\"} ", n, "\n");
    }
  }
  m.make_move_ms.Render("ply_lobby_make_move_ms", "MakeMove latency in the lobby, milliseconds.",
                        &out);
  Counter("ply_lobby_moves_committed_total", "Moves committed by this instance.",
          m.moves_committed.load(), &out);
  Gauge("ply_lobby_cached_matches", "Matches in this instance's memory.", g.cached_matches, &out);
  Gauge("ply_lobby_active_matches", "Matches in play in this instance's memory.", g.active_matches,
        &out);
  Gauge("ply_lobby_watchers", "Open WatchMatch streams on this instance.", g.watchers, &out);
  Gauge("ply_lobby_leases_held",
        "Matches whose timed work (bots, clocks) this instance drives now.", g.leases_held, &out);
  Counter("ply_lobby_leases_taken_total",
          "Matches this instance took over with no owner (a dead or departed instance's).",
          m.leases_taken.load(), &out);
  Gauge("ply_lobby_peers", "Other lobby instances on the same database.", g.peers, &out);
  Counter("ply_lobby_notifications_total",
          "Notifications heard on the database's ply_matches channel (own ones included).",
          g.notifications, &out);
  m.peer_event_lag_ms.Render(
      "ply_lobby_peer_event_lag_ms",
      "From a change committed by another instance to the events sent to this one's watchers.",
      &out);
  Counter("ply_lobby_resyncs_total",
          "Times every cached match was marked behind (the listening connection came back).",
          m.resyncs.load(), &out);
  Counter("ply_lobby_db_errors_total",
          "Database errors on the listening and owner connections and in announcements.",
          g.db_errors, &out);
  Counter("ply_lobby_db_reconnects_total", "Reconnections of the listening connection.",
          g.db_reconnects, &out);
  Counter("ply_lobby_db_settled_moves_total",
          "Moves whose commit failed for want of the database (a restart, a failover), then "
          "found stored or written again before the answer.",
          g.db_settled_moves, &out);
  Counter("ply_lobby_bot_calls_total", "ChooseMove calls made to ply-bot for matches' moves.",
          m.bot_calls.load(), &out);
  Counter("ply_lobby_analysis_bot_calls_total",
          "ChooseMove calls made to ply-bot by post-game analysis (tries again included).",
          m.analysis_bot_calls.load(), &out);
  Counter("ply_lobby_analysis_bot_busy_total",
          "Analysis calls every bot refused as busy (people's moves go first); asked again later.",
          m.analysis_bot_busy.load(), &out);
  Counter("ply_lobby_analysis_bot_failures_total",
          "Analysis calls that failed otherwise (tried again up to three times).",
          m.analysis_bot_failures.load(), &out);
  Counter("ply_lobby_bot_failures_total", "ChooseMove calls that brought no usable move.",
          m.bot_failures.load(), &out);
  Counter("ply_lobby_duplicate_bot_requests_total",
          "Bot requests for a ply another live instance had already asked for (must stay 0).",
          m.duplicate_bot_requests.load(), &out);
  return out;
}

}  // namespace ply::lobby
