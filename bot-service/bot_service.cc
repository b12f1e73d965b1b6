#include "bot-service/bot_service.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/log_text.h"
#include "common/proto_convert.h"
#include "engine/analysis/analysis.h"
#include "engine/core/text.h"
#include "engine/registry/registry.h"

namespace ply::bot {
namespace {

using SteadyClock = std::chrono::steady_clock;

double MsSince(SteadyClock::time_point t) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t).count();
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch())
      .count();
}

absl::Status CheckText(std::string_view what, const std::string& text) {
  if (text.size() > kMaxTextBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        Absl(what), " is ", text.size(), " bytes long; at most ", kMaxTextBytes, " are accepted"));
  }
  return absl::OkStatus();
}

// What goes back to a caller: the same code, the sentence with any control character that
// came in with the request escaped (an unknown difficulty is named in it, for instance).
grpc::Status ToCaller(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), EchoBounded(s.message(), 1024));
}

const char* PriorityName(Priority p) {
  return p == Priority::kBackground ? "background" : "interactive";
}

// A stop flag that is always raised: the search returns the move order's first move at once.
const std::atomic<bool> kStopNow{true};

}  // namespace

absl::StatusOr<LogLevel> ParseLogLevel(std::string_view text) {
  std::string t = absl::AsciiStrToLower(Absl(text));
  if (t == "error") return LogLevel::kError;
  if (t == "warning" || t == "warn") return LogLevel::kWarning;
  if (t == "info") return LogLevel::kInfo;
  if (t == "debug") return LogLevel::kDebug;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown log level '", Absl(text), "' (use error, warning, info or debug)"));
}

int64_t SearchBudgetMs(int64_t level_ms, int64_t requested_ms, std::optional<int64_t> remaining_ms,
                       int64_t margin_ms, int64_t max_budget_ms) {
  int64_t budget = level_ms > 0 ? std::min(level_ms, max_budget_ms) : max_budget_ms;
  if (requested_ms > 0) budget = std::min(budget, requested_ms);
  if (remaining_ms) {
    int64_t margin = std::min(margin_ms, *remaining_ms / 4);
    budget = std::min(budget, *remaining_ms - margin);
  }
  return std::max<int64_t>(budget, 0);
}

absl::StatusOr<PreparedSearch> PrepareSearch(const v1::ChooseMoveRequest& request,
                                             int64_t max_budget_ms) {
  const v1::GameSpec& spec = request.position().spec();
  if (absl::Status s = CheckText("the game name", spec.name()); !s.ok()) return s;
  if (spec.options_size() > kMaxOptions) {
    return absl::InvalidArgumentError(absl::StrCat("the game spec has ", spec.options_size(),
                                                   " options; at most ", kMaxOptions,
                                                   " are accepted"));
  }
  for (const auto& [name, value] : spec.options()) {
    if (absl::Status s = CheckText("an option name", name); !s.ok()) return s;
    if (absl::Status s = CheckText(absl::StrCat("option '", name, "'"), value); !s.ok()) return s;
  }
  const auto& moves = request.position().moves();
  if (moves.size() > kMaxHistoryMoves) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the position has ", moves.size(), " moves; at most ", kMaxHistoryMoves, " are accepted"));
  }
  for (int i = 0; i < moves.size(); ++i) {
    if (absl::Status s = CheckText(absl::StrCat("move ", i + 1), moves[i]); !s.ok()) return s;
  }
  if (absl::Status s = CheckText("the difficulty", request.difficulty()); !s.ok()) return s;
  if (request.budget_ms() < 0 || request.budget_ms() > max_budget_ms) {
    return absl::InvalidArgumentError(
        absl::StrCat("budget_ms is ", request.budget_ms(),
                     "; it must be 0 (the level's own) or between 1 and ", max_budget_ms));
  }
  if (!v1::BotPriority_IsValid(request.priority())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "priority ", request.priority(), " is unknown; use INTERACTIVE (0) or BACKGROUND (1)"));
  }
  if (request.max_nodes() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("max_nodes is ", request.max_nodes(),
                                                   "; it must be 0 (no limit) or positive"));
  }

  if (request.analysis() && !request.difficulty().empty()) {
    return absl::InvalidArgumentError("an analysis request takes no difficulty");
  }
  if (absl::Status s = CheckText("judge_move", request.judge_move()); !s.ok()) return s;
  if (!request.analysis() && !request.judge_move().empty()) {
    return absl::InvalidArgumentError("judge_move goes only with an analysis request");
  }
  if (request.max_depth() < 0 || request.max_depth() >= kMaxSearchPly) {
    return absl::InvalidArgumentError(absl::StrCat("max_depth is ", request.max_depth(),
                                                   "; it must be between 0 (no cap) and ",
                                                   kMaxSearchPly - 1));
  }

  const GameInfo* info = FindGame(spec.name());
  std::string level_name = request.difficulty().empty() ? "medium" : request.difficulty();
  if (info != nullptr && FindLevel(info->levels, level_name) == nullptr) {
    std::vector<std::string> names;
    for (const Difficulty& d : info->levels) names.push_back(d.name);
    return absl::InvalidArgumentError(absl::StrCat("unknown difficulty '", level_name, "' for ",
                                                   info->name,
                                                   " (known: ", absl::StrJoin(names, ", "), ")"));
  }
  // Unknown games and options, and every bad move, are named by the replay.
  absl::StatusOr<std::unique_ptr<AnyGame>> game = ReplayGame(
      spec.name(), FromProto(spec), std::vector<std::string>(moves.begin(), moves.end()));
  if (!game.ok()) return game.status();
  if ((*game)->Status().over) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the position is finished (", (*game)->Status().reason, "): there is no move to choose"));
  }
  if (!request.judge_move().empty()) {
    if (absl::Status s = (*game)->Play(request.judge_move()); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("judge_move: ", s.message()));
    }
    if (absl::Status s = (*game)->Undo(); !s.ok()) return s;
  }
  PreparedSearch prepared;
  prepared.judge_move = request.judge_move();
  prepared.level = request.analysis() ? AnalysisLevel(request.budget_ms() > 0 ? request.budget_ms()
                                                                              : max_budget_ms,
                                                      request.max_depth())
                                      : *FindLevel(info->levels, level_name);
  prepared.game = *std::move(game);
  prepared.requested_ms = request.budget_ms();
  prepared.max_nodes = request.max_nodes();
  prepared.seed = request.seed();
  prepared.priority = request.priority() == v1::BOT_PRIORITY_BACKGROUND ? Priority::kBackground
                                                                        : Priority::kInteractive;
  return prepared;
}

struct BotServiceImpl::Job {
  PreparedSearch search;
  std::string game_name;
  std::optional<std::chrono::system_clock::time_point> deadline;
  SteadyClock::time_point received;
  // Raised by OnCancel; read by the search at every node.
  std::atomic<bool> stop{false};
  // When OnCancel ran (steady clock, ns); 0 while not cancelled.
  std::atomic<int64_t> cancelled_at_ns{0};
  ChooseMoveReactor* reactor = nullptr;
  v1::ChooseMoveResponse* response = nullptr;
};

class BotServiceImpl::ChooseMoveReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit ChooseMoveReactor(std::shared_ptr<Job> job) : job_(std::move(job)) {}

  void OnCancel() override {
    job_->cancelled_at_ns.store(NowNs());
    job_->stop.store(true);
  }
  void OnDone() override { delete this; }

 private:
  // Shared with the worker, so that a late OnCancel never touches a freed job.
  std::shared_ptr<Job> job_;
};

BotServiceImpl::BotServiceImpl(BotServiceOptions options, WorkerPool* pool)
    : options_(std::move(options)), pool_(pool) {}

void BotServiceImpl::SetInstance(std::string name) {
  std::lock_guard lock(instance_mu_);
  options_.instance = std::move(name);
}

std::string BotServiceImpl::Instance() const {
  std::lock_guard lock(instance_mu_);
  return options_.instance;
}

grpc::ServerUnaryReactor* BotServiceImpl::ChooseMove(grpc::CallbackServerContext* context,
                                                     const v1::ChooseMoveRequest* request,
                                                     v1::ChooseMoveResponse* response) {
  ++metrics_.requests;
  if (grpc::Status auth = Authenticate(*context); !auth.ok()) {
    ++metrics_.unauthenticated;
    grpc::ServerUnaryReactor* refused = context->DefaultReactor();
    refused->Finish(auth);
    return refused;
  }
  auto job = std::make_shared<Job>();
  job->received = SteadyClock::now();
  job->game_name = request->position().spec().name().substr(0, kMaxTextBytes);
  job->response = response;
  auto* reactor = new ChooseMoveReactor(job);
  job->reactor = reactor;

  if (draining_) {
    ++metrics_.unavailable;
    reactor->Finish(grpc::Status(
        grpc::StatusCode::UNAVAILABLE,
        absl::StrCat("instance ", Instance(), " is shutting down; ask another instance")));
    return reactor;
  }
  absl::StatusOr<PreparedSearch> prepared = PrepareSearch(*request, options_.max_budget_ms);
  if (!prepared.ok()) {
    ++metrics_.invalid;
    Log(LogLevel::kInfo, absl::StrCat("game=", LogQuote(request->position().spec().name()),
                                      " level=", LogQuote(request->difficulty()), " outcome=",
                                      absl::StatusCodeToString(prepared.status().code()),
                                      " error=", LogQuote(prepared.status().message(), 256)));
    reactor->Finish(ToCaller(prepared.status()));
    return reactor;
  }
  job->search = *std::move(prepared);
  if (context->deadline() != std::chrono::system_clock::time_point::max()) {
    job->deadline = context->deadline();
  }
  const Priority priority = job->search.priority;
  if (!pool_->TrySubmit([this, job](SearchCache& cache) { RunJob(*job, cache); }, priority)) {
    ++metrics_.rejected;
    if (priority == Priority::kBackground) ++metrics_.rejected_background;
    Log(LogLevel::kInfo,
        absl::StrCat("game=", LogQuote(job->game_name), " level=", LogQuote(job->search.level.name),
                     " priority=", PriorityName(priority), " outcome=REJECTED"));
    std::string why =
        priority == Priority::kBackground
            ? absl::StrCat("instance ", Instance(), " is full for background requests: ",
                           pool_->workers() - pool_->reserved_workers(), " of its ",
                           pool_->workers(), " workers and ",
                           pool_->queue_capacity() - pool_->reserved_queue(), " of its ",
                           pool_->queue_capacity(),
                           " queue places may serve them, and they are taken; retry later")
            : absl::StrCat("instance ", Instance(), " is full: all ", pool_->workers(),
                           " workers are searching and ", pool_->queue_capacity(),
                           " requests are waiting; ask another instance or retry later");
    reactor->Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, why));
  }
  return reactor;
}

void BotServiceImpl::RunJob(Job& job, SearchCache& cache) {
  const double queue_ms = MsSince(job.received);
  ++metrics_.in_flight;
  auto finish = [&](const grpc::Status& status) {
    --metrics_.in_flight;
    job.reactor->Finish(status);
  };
  if (job.stop.load()) {
    ++metrics_.cancelled;
    Log(LogLevel::kInfo,
        absl::StrFormat("game=%s level=%s priority=%s queue_ms=%.1f outcome=CANCELLED",
                        LogQuote(job.game_name), LogQuote(job.search.level.name),
                        PriorityName(job.search.priority), queue_ms));
    finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled while waiting for a worker"));
    return;
  }

  // The budget a search started now may take, after the level, the request and the deadline.
  auto budget_now = [&]() -> int64_t {
    std::optional<int64_t> remaining_ms;
    if (job.deadline) {
      remaining_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         *job.deadline - std::chrono::system_clock::now())
                         .count();
    }
    return SearchBudgetMs(job.search.level.time_ms, job.search.requested_ms, remaining_ms,
                          options_.deadline_margin_ms, options_.max_budget_ms);
  };
  const int64_t budget_ms = budget_now();
  SearchRequest search{
      .level = job.search.level,
      .time_ms = std::max<int64_t>(budget_ms, 1),
      .max_nodes = job.search.max_nodes,
      .seed = job.search.seed,
      .stop = budget_ms > 0 ? &job.stop : &kStopNow,
  };
  const SteadyClock::time_point search_start = SteadyClock::now();
  absl::StatusOr<SearchReport> report = job.search.game->ChooseMove(search, &cache);
  // An analysis's played move, valued by the same judge (at one ply less than its depth).
  std::optional<SearchReport> judged;
  if (report.ok() && !job.search.judge_move.empty() &&
      NeedsMoveJudgement(*report, job.search.judge_move) && job.cancelled_at_ns.load() == 0) {
    const int64_t move_ms = budget_now();
    if (move_ms > 0) {
      absl::StatusOr<SearchReport> m = JudgeMove(*job.search.game, job.search.judge_move, *report,
                                                 {.time_ms = move_ms,
                                                  .max_depth = job.search.level.max_depth,
                                                  .max_nodes = job.search.max_nodes,
                                                  .stop = &job.stop},
                                                 &cache);
      if (m.ok()) judged = *std::move(m);
    }
  }
  // Wall time of the whole call: the search's own clock starts only once its tables are ready.
  const double call_ms = MsSince(search_start);

  const int64_t cancelled_at = job.cancelled_at_ns.load();
  if (cancelled_at != 0) {
    ++metrics_.cancelled;
    double free_ms = static_cast<double>(NowNs() - cancelled_at) / 1e6;
    metrics_.cancel_to_free_ms.Add(free_ms);
    Log(LogLevel::kInfo,
        absl::StrFormat("game=%s level=%s priority=%s budget_ms=%d call_ms=%.1f queue_ms=%.1f "
                        "outcome=CANCELLED freed_ms_after_cancel=%.2f",
                        LogQuote(job.game_name), LogQuote(job.search.level.name),
                        PriorityName(job.search.priority), budget_ms, call_ms, queue_ms, free_ms));
    finish(grpc::Status(grpc::StatusCode::CANCELLED, "the caller cancelled the request"));
    return;
  }
  if (!report.ok()) {
    ++metrics_.invalid;
    finish(ToCaller(report.status()));
    return;
  }
  metrics_.RecordSearch(report->elapsed_ms, report->nodes);
  ++metrics_.succeeded;
  v1::ChooseMoveResponse& r = *job.response;
  r.set_move(report->move);
  r.set_score(report->score);
  r.set_score_text(report->ScoreText());
  r.set_depth(report->depth);
  r.set_nodes(report->nodes);
  r.set_elapsed_ms(report->elapsed_ms);
  for (const std::string& m : report->pv) r.add_pv(m);
  r.set_exact(report->exact);
  r.set_outcome_only(report->outcome_only);
  r.set_random_move(report->random_move);
  r.set_stopped(report->stopped || budget_ms == 0);
  r.set_budget_ms(budget_ms);
  r.set_queue_ms(queue_ms);
  r.set_instance(Instance());
  if (judged) {
    v1::JudgedMove& j = *r.mutable_judged_move();
    j.set_score(judged->score);
    j.set_score_text(judged->ScoreText());
    j.set_exact(judged->exact);
    j.set_outcome_only(judged->exact && judged->outcome_only);
    j.set_depth(judged->depth);
    j.set_nodes(judged->nodes);
  }
  Log(LogLevel::kInfo,
      absl::StrFormat("game=%s level=%s priority=%s budget_ms=%d depth=%d nodes=%d "
                      "search_ms=%.1f call_ms=%.1f queue_ms=%.1f outcome=OK move=%s score=%s",
                      LogQuote(job.game_name), LogQuote(job.search.level.name),
                      PriorityName(job.search.priority), budget_ms, report->depth, report->nodes,
                      report->elapsed_ms, call_ms, queue_ms, LogQuote(report->move),
                      LogQuote(report->ScoreText())));
  finish(grpc::Status::OK);
}

grpc::ServerUnaryReactor* BotServiceImpl::ListGames(grpc::CallbackServerContext* context,
                                                    const v1::ListGamesRequest* /*request*/,
                                                    v1::ListGamesResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (grpc::Status auth = Authenticate(*context); !auth.ok()) {
    reactor->Finish(auth);
    return reactor;
  }
  for (const GameInfo& info : ply::ListGames()) ToProto(info, response->add_games());
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

std::string PrometheusText(const v1::GetMetricsResponse& m, double search_ms_sum,
                           int64_t search_count) {
  // Counters and counts are integers and printed as such: %g kept 6 significant digits, so past
  // 999,999 a counter moved in steps of 10 or more (1234567 read 1.23457e+06). Other values get
  // 15 digits, which a double holds exactly.
  std::string text;
  auto header = [&text](std::string_view name, std::string_view type, std::string_view help) {
    absl::StrAppendFormat(&text, "# HELP %s %s\n# TYPE %s %s\n", Absl(name), Absl(help), Absl(name),
                          Absl(type));
  };
  auto integer = [&](std::string_view name, std::string_view type, std::string_view help,
                     int64_t value) {
    header(name, type, help);
    absl::StrAppendFormat(&text, "%s %d\n", Absl(name), value);
  };
  auto real = [&](std::string_view name, std::string_view help, double value) {
    header(name, "gauge", help);
    absl::StrAppendFormat(&text, "%s %.15g\n", Absl(name), value);
  };
  integer("ply_bot_requests_total", "counter", "ChooseMove calls received.", m.requests());
  integer("ply_bot_succeeded_total", "counter", "Requests answered with a move.", m.succeeded());
  integer("ply_bot_invalid_total", "counter", "Requests refused as invalid.", m.invalid());
  integer("ply_bot_rejected_total", "counter", "Requests refused because the queue was full.",
          m.rejected());
  integer("ply_bot_cancelled_total", "counter", "Requests cancelled by their caller.",
          m.cancelled());
  integer("ply_bot_unauthenticated_total", "counter",
          "Requests refused for a missing or wrong token.", m.unauthenticated());
  integer("ply_bot_unavailable_total", "counter", "Requests refused while shutting down.",
          m.unavailable());
  integer("ply_bot_rejected_background_total", "counter",
          "Background requests refused because their share of the instance was full.",
          m.rejected_background());
  integer("ply_bot_background_in_flight", "gauge", "Background searches running now.",
          m.background_in_flight());
  integer("ply_bot_background_queue_length", "gauge", "Background requests waiting for a worker.",
          m.background_queue_length());
  integer("ply_bot_reserved_workers", "gauge", "Workers kept for interactive requests.",
          m.reserved_workers());
  integer("ply_bot_in_flight", "gauge", "Searches running now.", m.in_flight());
  integer("ply_bot_queue_length", "gauge", "Requests waiting for a worker.", m.queue_length());
  integer("ply_bot_workers", "gauge", "Search workers.", m.workers());
  integer("ply_bot_queue_capacity", "gauge", "Requests that may wait for a worker.",
          m.queue_capacity());
  real("ply_bot_nodes_per_second", "Search speed over all answered requests.",
       m.nodes_per_second());
  header("ply_bot_search_ms", "summary",
         "Search time of answered requests: quantiles over the last 4096, sum and count over "
         "all.");
  absl::StrAppendFormat(&text, "ply_bot_search_ms{quantile=\"0.5\"} %.15g\n", m.search_ms_p50());
  absl::StrAppendFormat(&text, "ply_bot_search_ms{quantile=\"0.9\"} %.15g\n", m.search_ms_p90());
  absl::StrAppendFormat(&text, "ply_bot_search_ms{quantile=\"0.99\"} %.15g\n", m.search_ms_p99());
  absl::StrAppendFormat(&text, "ply_bot_search_ms_sum %.15g\n", search_ms_sum);
  absl::StrAppendFormat(&text, "ply_bot_search_ms_count %d\n", search_count);
  real("ply_bot_search_ms_mean", "Mean search time of the last 4096 answered requests.",
       m.search_ms_mean());
  real("ply_bot_cancel_to_free_ms_mean",
       "Mean time from a cancellation to its worker being free, over the last 1024.",
       m.cancel_to_free_ms_mean());
  real("ply_bot_cancel_to_free_ms_max",
       "Longest time from a cancellation to its worker being free.", m.cancel_to_free_ms_max());
  return text;
}

v1::GetMetricsResponse BotServiceImpl::MetricsSnapshot() const {
  v1::GetMetricsResponse m;
  m.set_requests(metrics_.requests);
  m.set_succeeded(metrics_.succeeded);
  m.set_invalid(metrics_.invalid);
  m.set_rejected(metrics_.rejected);
  m.set_rejected_background(metrics_.rejected_background);
  m.set_reserved_workers(pool_->reserved_workers());
  m.set_reserved_queue(pool_->reserved_queue());
  m.set_background_in_flight(pool_->background_busy());
  m.set_background_queue_length(pool_->background_queued());
  m.set_cancelled(metrics_.cancelled);
  m.set_unauthenticated(metrics_.unauthenticated);
  m.set_unavailable(metrics_.unavailable);
  m.set_in_flight(metrics_.in_flight);
  m.set_queue_length(pool_->queued());
  m.set_workers(pool_->workers());
  m.set_queue_capacity(pool_->queue_capacity());
  m.set_search_ms_mean(metrics_.search_ms.Mean());
  m.set_search_ms_p50(metrics_.search_ms.Percentile(50));
  m.set_search_ms_p90(metrics_.search_ms.Percentile(90));
  m.set_search_ms_p99(metrics_.search_ms.Percentile(99));
  m.set_nodes_per_second(metrics_.NodesPerSecond());
  m.set_cancel_to_free_ms_mean(metrics_.cancel_to_free_ms.Mean());
  m.set_cancel_to_free_ms_max(metrics_.cancel_to_free_ms.Max());

  m.set_prometheus_text(
      PrometheusText(m, static_cast<double>(metrics_.total_search_us) / 1000.0, metrics_.searches));
  return m;
}

grpc::ServerUnaryReactor* BotServiceImpl::GetMetrics(grpc::CallbackServerContext* context,
                                                     const v1::GetMetricsRequest* /*request*/,
                                                     v1::GetMetricsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (grpc::Status auth = Authenticate(*context); !auth.ok()) {
    reactor->Finish(auth);
    return reactor;
  }
  *response = MetricsSnapshot();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::Status BotServiceImpl::Authenticate(const grpc::CallbackServerContext& context) const {
  if (options_.auth_token.empty()) return grpc::Status::OK;
  const std::string expected = absl::StrCat(kAuthScheme, options_.auth_token);
  auto [first, last] = context.client_metadata().equal_range(kAuthMetadataKey);
  for (auto it = first; it != last; ++it) {
    const grpc::string_ref& got = it->second;
    // Constant time: how much of a guess matched must not show in the answer's timing.
    if (got.size() != expected.size()) continue;
    unsigned char differ = 0;
    for (size_t i = 0; i < expected.size(); ++i) differ |= got.data()[i] ^ expected[i];
    if (differ == 0) return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                      "this ply-bot instance requires its token as 'authorization: Bearer TOKEN' "
                      "metadata (the lobby's --bot_token_file)");
}

void BotServiceImpl::Log(LogLevel level, std::string_view line) const {
  if (level > options_.log_level) return;
  // One write per line, so that lines from different workers never interleave.
  std::string out = absl::StrCat("ply-bot[", Instance(), "] ", Absl(line), "\n");
  std::fwrite(out.data(), 1, out.size(), stderr);
}

}  // namespace ply::bot
