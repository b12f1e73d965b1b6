#include "lobby-server/analysis/analyzer.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/proto_convert.h"
#include "engine/analysis/analysis.h"
#include "engine/core/random.h"

namespace ply::lobby {

struct Analyzer::Job {
  int64_t match_id = 0;
  std::shared_ptr<AnalysisSink> sink;
  v1::GameSpec spec;
  std::vector<std::string> moves;
  // The match is still on: the analysis is not stored.
  bool partial = false;
  std::string holder;
  bool claimed = false;
  bool running = false;
  bool told_waiting = false;
  absl::Time started;
  // Who asked; the per-client keys it counts against (none when exempt) while `counted`.
  AnalysisClient client;
  std::vector<std::string> keys;
  bool counted = false;
  // In the queue (under Analyzer::mu_).
  bool queued = false;
  // Positions whose verdicts were kept from an earlier request, and whether this one only
  // brings such an analysis up to date (Analyzer::kUpdatePositions).
  int kept = 0;
  bool update = false;

  std::mutex mu;
  // Indices (0..moves.size()) of the positions to judge, and how far the calls have got.
  std::vector<int> positions;
  size_t next = 0;
  int in_flight = 0;
  // Positions a bot refused as busy, asked again before the next new one; the positions kept
  // in flight at most (--analysis_parallel, less after a refusal: as many as the bots took),
  // and the answers since the last refusal (enough of them widen it by one again).
  std::deque<int> again;
  int window = 1;
  int calm = 0;
  // Busy refusals in a row, for the pause when none is left in flight.
  int busy_streak = 0;
  int done = 0;
  bool over = false;
  std::vector<std::optional<SearchReport>> judgements;
  // The played moves' values from the judges of the positions before them (JudgeMove).
  std::vector<std::optional<SearchReport>> played;
  std::vector<int> tries;
  // Whether the last answer was a busy refusal.
  bool bots_busy = false;
  std::set<std::string> instances;
  std::shared_ptr<BotClient> bot;
  std::vector<std::shared_ptr<BotClient::PendingMove>> calls;
  absl::Time last_renew;
};

namespace {

v1::MoveMark ToProto(Mark mark) {
  switch (mark) {
    case Mark::kNone:
      return v1::MOVE_MARK_NONE;
    case Mark::kInaccuracy:
      return v1::MOVE_MARK_INACCURACY;
    case Mark::kMistake:
      return v1::MOVE_MARK_MISTAKE;
    case Mark::kBlunder:
      return v1::MOVE_MARK_BLUNDER;
  }
  return v1::MOVE_MARK_NONE;
}

v1::MatchAnalysis ToProto(const GameAnalysis& a) {
  v1::MatchAnalysis out;
  out.set_game(a.game);
  for (const MoveVerdict& v : a.moves) {
    v1::MoveAnalysis* m = out.add_moves();
    m->set_ply(v.ply + 1);
    m->set_seat(v.player);
    m->set_move(v.move);
    m->set_score_before(v.before);
    m->set_score_before_text(v.before_text);
    m->set_before_exact(v.before_exact);
    m->set_win_before(v.win_before);
    m->set_score_after(v.after);
    m->set_score_after_text(v.after_text);
    m->set_after_exact(v.after_exact);
    m->set_win_after(v.win_after);
    m->set_best_move(v.best_move);
    for (const std::string& s : v.best_line) m->add_best_line(s);
    m->set_mark(ToProto(v.mark));
    m->set_exact_verdict(v.exact_verdict);
    m->set_accuracy(v.accuracy);
  }
  for (int seat = 0; seat < 2; ++seat) {
    const PlayerSummary& s = a.players[seat];
    v1::PlayerAnalysis* p = out.add_players();
    p->set_seat(seat);
    p->set_moves(s.moves);
    p->set_accuracy(s.accuracy);
    p->set_inaccuracies(s.inaccuracies);
    p->set_mistakes(s.mistakes);
    p->set_blunders(s.blunders);
  }
  return out;
}

v1::AnalyzeMatchEvent Progress(int done, int total, bool waiting, bool bots_busy = false) {
  v1::AnalyzeMatchEvent e;
  e.mutable_progress()->set_positions_done(done);
  e.mutable_progress()->set_positions(total);
  e.mutable_progress()->set_waiting(waiting);
  e.mutable_progress()->set_bots_busy(bots_busy);
  return e;
}

// A bot call's failure in the lobby's words: gRPC's own text for a failed connection would
// read, to a client, as if the lobby could not be reached.
std::string BotFailure(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      return "the bots cannot be reached";
    case absl::StatusCode::kDeadlineExceeded:
      return "the bots did not answer in time";
    case absl::StatusCode::kCancelled:
      return "the call was cancelled";
    default:
      return absl::StrCat("the bot answered ", absl::StatusCodeToString(status.code()), " (",
                          status.message(), ")");
  }
}

// "3 minutes", "40 seconds".
std::string Wait(absl::Duration d) {
  const int64_t s = std::max<int64_t>(1, absl::ToInt64Seconds(d + absl::Seconds(1)));
  if (s < 120) return absl::StrCat(s, s == 1 ? " second" : " seconds");
  const int64_t m = (s + 59) / 60;
  return absl::StrCat(m, " minutes");
}

absl::Status SendStored(AnalysisSink& sink, const std::string& json) {
  v1::AnalyzeMatchEvent e;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(json, e.mutable_analysis(), options).ok()) {
    return absl::InternalError("the stored analysis cannot be read");
  }
  sink.Send(std::move(e));
  return absl::OkStatus();
}

}  // namespace

Analyzer::Analyzer(Lobby* lobby, MatchStore* store, BotTargets* bots, Executor* executor,
                   AnalyzerOptions options)
    : lobby_(lobby),
      store_(store),
      bots_(bots),
      executor_(executor),
      options_(std::move(options)),
      kept_(options_.kept_matches) {}

Analyzer::~Analyzer() {
  std::vector<std::weak_ptr<Job>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    jobs.swap(jobs_);
  }
  for (const std::weak_ptr<Job>& weak : jobs) {
    std::shared_ptr<Job> job = weak.lock();
    if (job == nullptr) continue;
    std::vector<std::shared_ptr<BotClient::PendingMove>> calls;
    {
      std::lock_guard<std::mutex> lock(job->mu);
      job->over = true;
      calls.swap(job->calls);
    }
    for (auto& c : calls) c->Cancel();
  }
  std::unique_lock<std::mutex> lock(mu_);
  // The callbacks of cancelled calls come quickly; a bounded wait keeps a stuck one from
  // holding the process.
  idle_.wait_for(lock, std::chrono::seconds(10), [this] { return calls_ == 0; });
}

absl::Status Analyzer::Analyze(int64_t match_id, bool stored_only,
                               std::shared_ptr<AnalysisSink> sink, AnalysisClient client) {
  absl::StatusOr<v1::Match> match = lobby_->GetMatch(match_id);
  if (!match.ok()) return match.status();
  if (match->status() == v1::MATCH_STATUS_WAITING) {
    return absl::FailedPreconditionError(
        absl::StrCat("match ", match_id, " has not started: there is nothing to analyse"));
  }
  const bool active = match->status() == v1::MATCH_STATUS_ACTIVE;
  if (active) {
    for (const v1::Seat& s : match->seats()) {
      if (s.kind() != v1::SEAT_KIND_BOT) {
        return absl::PermissionDeniedError(absl::StrCat(
            "match ", match_id,
            " is being played: it can be analysed once it is over (only matches between bots "
            "can be analysed while they run)"));
      }
    }
  }
  if (stored_only) {
    if (active) return absl::NotFoundError("an active match has no stored analysis");
    absl::StatusOr<std::optional<std::string>> stored = store_->LoadAnalysis(match_id);
    if (!stored.ok()) return stored.status();
    if (!stored->has_value()) {
      return absl::NotFoundError(absl::StrCat("match ", match_id, " has not been analysed"));
    }
    if (absl::Status s = SendStored(*sink, **stored); !s.ok()) return s;
    sink->Finish(absl::OkStatus());
    return absl::OkStatus();
  }
  auto job = std::make_shared<Job>();
  job->match_id = match_id;
  job->sink = std::move(sink);
  job->spec = match->spec();
  for (const v1::MoveRecord& m : match->moves()) job->moves.push_back(m.move());
  job->partial = active;
  job->client = std::move(client);
  if (!job->client.exempt) {
    if (!job->client.address.empty()) job->keys.push_back("address " + job->client.address);
    if (!job->client.player.empty()) job->keys.push_back("player " + job->client.player);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t salt = ++next_holder_ ^ reinterpret_cast<uintptr_t>(job.get()) ^
                          static_cast<uint64_t>(absl::ToUnixNanos(absl::Now()));
    job->holder = absl::StrCat(options_.instance, "/", absl::Hex(Mix64(salt)));
  }
  if (active) {
    Start(job);
  } else {
    Claim(job);
  }
  return absl::OkStatus();
}

void Analyzer::Claim(const std::shared_ptr<Job>& job) {
  if (job->sink->Gone()) return;
  absl::StatusOr<AnalysisClaim> claim =
      store_->ClaimAnalysis(job->match_id, job->holder, options_.lease_ms);
  if (!claim.ok() && claim.status().code() == absl::StatusCode::kUnimplemented) {
    // A store without analyses (tests' memory store): analyse, keep nothing.
    Start(job);
    return;
  }
  if (!claim.ok()) {
    job->sink->Finish(claim.status());
    return;
  }
  switch (claim->state) {
    case AnalysisClaim::State::kStored:
      job->sink->Finish(SendStored(*job->sink, claim->result));
      return;
    case AnalysisClaim::State::kClaimed:
      job->claimed = true;
      Start(job);
      return;
    case AnalysisClaim::State::kBusy:
      if (!job->told_waiting) {
        job->told_waiting = true;
        job->sink->Send(Progress(0, 0, /*waiting=*/true));
      }
      executor_->PostAt(absl::Now() + absl::Milliseconds(options_.poll_ms),
                        [this, job] { Claim(job); });
      return;
  }
}

void Analyzer::Start(const std::shared_ptr<Job>& job) {
  absl::StatusOr<std::vector<bool>> todo =
      PositionsToJudge(job->spec.name(), FromProto(job->spec), job->moves);
  absl::Status refused = todo.status();
  if (refused.ok() && bots_ == nullptr) {
    refused = absl::UnavailableError("this lobby has no bots to analyse with");
  }
  bool run = false;
  if (refused.ok()) {
    for (size_t i = 0; i < todo->size(); ++i) {
      if ((*todo)[i]) job->positions.push_back(static_cast<int>(i));
    }
    TakeKept(*job);
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      refused = absl::UnavailableError("the lobby is shutting down");
    } else if (queue_.size() >= static_cast<size_t>(std::max(0, options_.max_queued)) &&
               running_ >= options_.max_running) {
      refused = absl::ResourceExhaustedError(
          absl::StrCat("this lobby is analysing ", running_, " matches and ", queue_.size(),
                       " more wait their turn, as many as it keeps: try again in a minute"));
    } else {
      refused = AdmitLocked(*job, absl::Now());
    }
    if (refused.ok()) {
      // Forget the jobs that are gone while adding this one.
      std::erase_if(jobs_, [](const std::weak_ptr<Job>& j) { return j.expired(); });
      jobs_.push_back(job);
      if (running_ < options_.max_running) {
        ++running_;
        job->running = true;
        if (!job->client.address.empty()) ++clients_[job->client.address].running;
        run = true;
      } else {
        job->queued = true;
        job->last_renew = absl::Now();
        queue_.push_back(job);
        if (!sweeping_) {
          sweeping_ = true;
          executor_->PostAt(absl::Now() + absl::Seconds(1), [this] { Sweep(); });
        }
      }
    }
  }
  if (!refused.ok()) {
    if (job->claimed) store_->ReleaseAnalysis(job->match_id, job->holder);
    job->sink->Finish(refused);
    return;
  }
  if (run) {
    Begin(job);
  } else {
    TellQueue();
  }
}

void Analyzer::TakeKept(Job& job) {
  job.kept = kept_.Take(job.match_id, job.moves, job.positions, job.judgements, job.played);
  job.update = job.kept > 0 && job.positions.size() <= static_cast<size_t>(kUpdatePositions);
}

absl::Status Analyzer::AdmitLocked(Job& job, absl::Time now) {
  // Entries of clients with nothing in flight and no start within the hour are forgotten.
  if (clients_.size() > 1024) {
    std::erase_if(clients_, [now](const auto& entry) {
      const ClientUse& u = entry.second;
      return u.in_flight == 0 && u.running == 0 &&
             (u.starts.empty() || now - u.starts.back() > absl::Hours(1));
    });
  }
  for (const std::string& key : job.keys) {
    ClientUse& use = clients_[key];
    while (!use.starts.empty() && now - use.starts.front() >= absl::Hours(1)) {
      use.starts.pop_front();
    }
    const char* who = absl::StartsWith(key, "player ") ? "this player" : "this client";
    if (options_.client_in_flight > 0 && use.in_flight >= options_.client_in_flight) {
      return absl::ResourceExhaustedError(
          absl::StrCat(who, " has ", use.in_flight, use.in_flight == 1 ? " analysis" : " analyses",
                       " running or waiting already, as many as one may: ask again when ",
                       use.in_flight == 1 ? "it is" : "one is", " done"));
    }
    if (options_.client_per_hour > 0 && !job.update &&
        use.starts.size() >= static_cast<size_t>(options_.client_per_hour)) {
      return absl::ResourceExhaustedError(
          absl::StrCat(who, " has started ", use.starts.size(),
                       " analyses in the last hour, as many as one may: the next may start in ",
                       Wait(use.starts.front() + absl::Hours(1) - now),
                       " (analyses already made are always served)"));
    }
  }
  for (const std::string& key : job.keys) {
    ClientUse& use = clients_[key];
    ++use.in_flight;
    if (!job.update) use.starts.push_back(now);
  }
  job.counted = true;
  return absl::OkStatus();
}

void Analyzer::ReleaseLocked(Job& job) {
  if (!job.counted) return;
  job.counted = false;
  for (const std::string& key : job.keys) --clients_[key].in_flight;
}

std::vector<size_t> Analyzer::QueueOrderLocked() {
  // A client's k-th waiting analysis goes in round (its running analyses + k): everyone's first
  // before anyone's second, arrival order within a round.
  std::vector<std::pair<int, size_t>> rounds;
  std::map<std::string, int> seen;
  for (size_t i = 0; i < queue_.size(); ++i) {
    const std::string& who = queue_[i]->client.address;
    auto it = clients_.find(who);
    const int running = it == clients_.end() ? 0 : it->second.running;
    rounds.emplace_back(running + seen[who]++, i);
  }
  std::stable_sort(rounds.begin(), rounds.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<size_t> order;
  for (const auto& r : rounds) order.push_back(r.second);
  return order;
}

void Analyzer::TellQueue() {
  std::vector<std::pair<std::shared_ptr<AnalysisSink>, v1::AnalyzeMatchEvent>> tell;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::vector<size_t> order = QueueOrderLocked();
    for (size_t place = 0; place < order.size(); ++place) {
      const Job& job = *queue_[order[place]];
      v1::AnalyzeMatchEvent e = Progress(0, static_cast<int>(job.positions.size()), false);
      e.mutable_progress()->set_queue_position(static_cast<int>(place) + 1);
      e.mutable_progress()->set_queued(static_cast<int>(queue_.size()));
      e.mutable_progress()->set_running(running_);
      tell.emplace_back(job.sink, std::move(e));
    }
  }
  for (auto& [sink, event] : tell) sink->Send(std::move(event));
}

void Analyzer::Sweep() {
  std::vector<std::shared_ptr<Job>> gone, renew;
  const absl::Time now = absl::Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    std::erase_if(queue_, [&](const std::shared_ptr<Job>& job) {
      if (!job->sink->Gone()) return false;
      job->queued = false;
      ReleaseLocked(*job);
      gone.push_back(job);
      return true;
    });
    for (const auto& job : queue_) {
      if (job->claimed && now - job->last_renew > absl::Milliseconds(options_.lease_ms / 3)) {
        job->last_renew = now;
        renew.push_back(job);
      }
    }
    sweeping_ = !queue_.empty();
    if (sweeping_) executor_->PostAt(now + absl::Seconds(1), [this] { Sweep(); });
  }
  // Nobody waits for these: they are made when someone asks again.
  for (const auto& job : gone) {
    if (job->claimed) store_->ReleaseAnalysis(job->match_id, job->holder);
  }
  for (const auto& job : renew) (void)store_->RenewAnalysis(job->match_id, job->holder);
  TellQueue();
}

void Analyzer::Begin(const std::shared_ptr<Job>& job) {
  job->started = absl::Now();
  job->last_renew = job->started;
  job->bot = bots_->Current();
  job->judgements.resize(job->moves.size() + 1);
  job->played.resize(job->moves.size());
  job->tries.assign(job->moves.size() + 1, 0);
  const bool recent =
      absl::ToUnixMillis(absl::Now()) - learned_ms_.load(std::memory_order_relaxed) < 30'000;
  const int learned = recent ? learned_window_.load(std::memory_order_relaxed) : 0;
  job->window =
      std::clamp(learned > 0 ? learned : options_.parallel, 1, std::max(1, options_.parallel));
  job->sink->Send(Progress(0, static_cast<int>(job->positions.size()), false));
  if (job->positions.empty()) {
    Complete(job);
    return;
  }
  Launch(job);
}

void Analyzer::Learned(int window) {
  learned_window_.store(window, std::memory_order_relaxed);
  learned_ms_.store(absl::ToUnixMillis(absl::Now()), std::memory_order_relaxed);
}

void Analyzer::Launch(const std::shared_ptr<Job>& job) {
  std::vector<int> start;
  {
    std::lock_guard<std::mutex> lock(job->mu);
    if (job->over) return;
    while (job->in_flight < job->window &&
           (!job->again.empty() || job->next < job->positions.size())) {
      if (!job->again.empty()) {
        start.push_back(job->again.front());
        job->again.pop_front();
      } else {
        start.push_back(job->positions[job->next++]);
      }
      ++job->in_flight;
    }
  }
  for (int position : start) Ask(job, position);
}

void Analyzer::Ask(const std::shared_ptr<Job>& job, int position) {
  v1::ChooseMoveRequest request;
  *request.mutable_position()->mutable_spec() = job->spec;
  for (int i = 0; i < position; ++i) request.mutable_position()->add_moves(job->moves[i]);
  request.set_analysis(true);
  // The move played here, valued by the same judge when it is not the judge's best.
  if (position < static_cast<int>(job->moves.size())) request.set_judge_move(job->moves[position]);
  request.set_budget_ms(options_.budget_ms);
  request.set_max_depth(options_.max_depth);
  request.set_max_nodes(options_.max_nodes);
  // Nobody waits on a move: people's bots go first.
  request.set_priority(v1::BOT_PRIORITY_BACKGROUND);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      executor_->Post([this, job] { Fail(job, absl::UnavailableError("shutting down")); });
      return;
    }
    ++calls_;
  }
  if (options_.metrics != nullptr) options_.metrics->analysis_bot_calls.fetch_add(1);
  // Time for the search, a wait in a busy instance's queue, and the network.
  const absl::Duration timeout = absl::Milliseconds(options_.budget_ms * 3 + 2000);
  std::shared_ptr<BotClient::PendingMove> call = job->bot->ChooseMoveAsync(
      request, timeout, [this, job, position](absl::StatusOr<v1::ChooseMoveResponse> reply) {
        Judged(job, position, std::move(reply));
        std::lock_guard<std::mutex> lock(mu_);
        if (--calls_ == 0) idle_.notify_all();
      });
  std::lock_guard<std::mutex> lock(job->mu);
  job->calls.push_back(std::move(call));
}

void Analyzer::Judged(const std::shared_ptr<Job>& job, int position,
                      absl::StatusOr<v1::ChooseMoveResponse> reply) {
  bool complete = false, renew = false, retry = false, busy = false, tell_busy = false;
  // A busy refusal with nothing left in flight: no answer will launch it, a timer must.
  bool pause_then_launch = false;
  int done = 0, total = 0, tries = 0;
  std::optional<KeptVerdicts::Verdict> verdict;
  {
    std::lock_guard<std::mutex> lock(job->mu);
    if (job->over) {
      --job->in_flight;
      return;
    }
    total = static_cast<int>(job->positions.size());
    done = job->done;
    if (!reply.ok() && options_.metrics != nullptr) {
      (reply.status().code() == absl::StatusCode::kResourceExhausted
           ? options_.metrics->analysis_bot_busy
           : options_.metrics->analysis_bot_failures)
          .fetch_add(1);
    }
    if (!reply.ok() && reply.status().code() == absl::StatusCode::kResourceExhausted) {
      // Every bot it reached is busy (people's moves go first): the position is asked again,
      // as often as it takes, once one in flight is answered; no more are kept in flight than
      // the bots took. With none left in flight, after a pause.
      busy = true;
      --job->in_flight;
      job->again.push_back(position);
      job->window = std::max(1, job->in_flight);
      Learned(job->window);
      job->calm = 0;
      tries = ++job->busy_streak;
      tell_busy = !job->bots_busy;
      job->bots_busy = true;
      // Answers still to come will launch it; none: the pause below does.
      pause_then_launch = job->in_flight == 0;
    } else if (!reply.ok()) {
      tries = ++job->tries[position];
      // A position tried again stays in flight.
      retry = tries < options_.attempts;
      if (!retry) {
        job->over = true;
        --job->in_flight;
      }
    } else {
      --job->in_flight;
      job->bots_busy = false;
      job->busy_streak = 0;
      // A run of answers four times the window: the bots may take one more.
      if (job->window < options_.parallel && ++job->calm >= 4 * job->window) {
        ++job->window;
        Learned(job->window);
        job->calm = 0;
      }
      SearchReport r;
      r.move = reply->move();
      r.score = reply->score();
      r.depth = reply->depth();
      r.nodes = reply->nodes();
      r.exact = reply->exact();
      r.outcome_only = reply->exact() && reply->outcome_only();
      r.pv.assign(reply->pv().begin(), reply->pv().end());
      job->judgements[position] = std::move(r);
      if (reply->has_judged_move() && position < static_cast<int>(job->played.size())) {
        const v1::JudgedMove& m = reply->judged_move();
        job->played[position] = SearchReport{.score = m.score(),
                                             .depth = m.depth(),
                                             .nodes = m.nodes(),
                                             .exact = m.exact(),
                                             .outcome_only = m.exact() && m.outcome_only()};
      }
      if (!reply->instance().empty()) job->instances.insert(reply->instance());
      verdict = KeptVerdicts::Verdict{.judgement = job->judgements[position]};
      if (position < static_cast<int>(job->moves.size())) {
        verdict->played = job->played[position];
        verdict->move = job->moves[position];
      }
      done = ++job->done;
      complete = done == total;
      if (complete) job->over = true;
      const absl::Time now = absl::Now();
      if (job->claimed && now - job->last_renew > absl::Milliseconds(options_.lease_ms / 3)) {
        job->last_renew = now;
        renew = true;
      }
    }
  }
  if (busy) {
    if (job->partial && job->sink->Gone()) {
      executor_->PostAt(absl::Now(), [this, job] { Fail(job, absl::CancelledError("gone")); });
      return;
    }
    if (tell_busy) job->sink->Send(Progress(done, total, false, /*bots_busy=*/true));
    if (!pause_then_launch) return;
    // Nothing in flight: 1, 2, 4, 8 times the pause, with a random part so that analyses do
    // not ask in step.
    const int64_t pause = options_.busy_retry_ms << std::min(tries - 1, 3);
    const int64_t jitter =
        static_cast<int64_t>(Mix64(static_cast<uint64_t>(position) * 7919 + tries) %
                             static_cast<uint64_t>(std::max<int64_t>(1, pause / 2)));
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    executor_->PostAt(absl::Now() + absl::Milliseconds(pause + jitter),
                      [this, job] { Launch(job); });
    return;
  }
  if (!reply.ok()) {
    if (!retry) {
      executor_->PostAt(absl::Now(), [this, job, status = reply.status(), position] {
        Fail(job, absl::UnavailableError(absl::StrCat(
                      "no bot could judge the position before move ", position + 1, ": ",
                      BotFailure(status), "; try again when the bots are back")));
      });
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    executor_->PostAt(absl::Now() + absl::Milliseconds(200 * tries),
                      [this, job, position] { Ask(job, position); });
    return;
  }
  if (verdict) kept_.Keep(job->match_id, job->moves, position, *std::move(verdict));
  job->sink->Send(Progress(done, total, false));
  if (renew) {
    executor_->PostAt(absl::Now(), [store = store_, job] {
      (void)store->RenewAnalysis(job->match_id, job->holder);
    });
  }
  if (complete) {
    executor_->PostAt(absl::Now(), [this, job] { Complete(job); });
    return;
  }
  if (job->partial && job->sink->Gone()) {
    // Nobody waits for a partial analysis, and it is not kept.
    std::lock_guard<std::mutex> lock(job->mu);
    if (job->over) return;
    job->over = true;
    executor_->PostAt(absl::Now(), [this, job] { Fail(job, absl::CancelledError("gone")); });
    return;
  }
  Launch(job);
}

void Analyzer::Complete(const std::shared_ptr<Job>& job) {
  absl::StatusOr<GameAnalysis> assembled = AssembleAnalysis(
      job->spec.name(), FromProto(job->spec), job->moves, job->judgements, job->played);
  if (!assembled.ok()) {
    Fail(job, assembled.status());
    return;
  }
  v1::AnalyzeMatchEvent event;
  v1::MatchAnalysis* a = event.mutable_analysis();
  *a = ToProto(*assembled);
  a->set_match_id(job->match_id);
  a->set_partial(job->partial);
  a->set_budget_ms(options_.budget_ms);
  a->set_max_depth(options_.max_depth);
  a->set_max_nodes(options_.max_nodes);
  a->set_positions(static_cast<int>(job->positions.size()) + job->kept);
  a->set_elapsed_ms(absl::ToDoubleMilliseconds(absl::Now() - job->started));
  a->set_analysed_ms(absl::ToUnixMillis(absl::Now()));
  for (const std::string& i : job->instances) a->add_instances(i);
  if (job->claimed) {
    std::string json;
    if (!google::protobuf::util::MessageToJsonString(*a, &json).ok()) {
      Fail(job, absl::InternalError("the analysis cannot be written as JSON"));
      return;
    }
    if (absl::Status s = store_->StoreAnalysis(job->match_id, job->holder, json); !s.ok()) {
      Fail(job, s);
      return;
    }
    // Stored: later requests read it, not the verdicts.
    kept_.Drop(job->match_id);
  }
  Ended(*job);
  job->sink->Send(std::move(event));
  job->sink->Finish(absl::OkStatus());
}

void Analyzer::Fail(const std::shared_ptr<Job>& job, const absl::Status& status) {
  std::vector<std::shared_ptr<BotClient::PendingMove>> calls;
  {
    std::lock_guard<std::mutex> lock(job->mu);
    job->over = true;
    calls.swap(job->calls);
  }
  for (auto& c : calls) c->Cancel();
  if (job->claimed) store_->ReleaseAnalysis(job->match_id, job->holder);
  Ended(*job);
  job->sink->Finish(status);
}

void Analyzer::Ended(Job& job) {
  std::vector<std::shared_ptr<Job>> next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (job.running) {
      job.running = false;
      --running_;
      if (!job.client.address.empty()) --clients_[job.client.address].running;
    }
    ReleaseLocked(job);
    if (stopping_) return;
    // The next in turn take the free places.
    while (running_ < options_.max_running && !queue_.empty()) {
      const size_t first = QueueOrderLocked().front();
      std::shared_ptr<Job> up = queue_[first];
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(first));
      up->queued = false;
      if (up->sink->Gone()) {
        ReleaseLocked(*up);
        if (up->claimed) {
          executor_->PostAt(absl::Now(), [store = store_, up] {
            store->ReleaseAnalysis(up->match_id, up->holder);
          });
        }
        continue;
      }
      ++running_;
      up->running = true;
      if (!up->client.address.empty()) ++clients_[up->client.address].running;
      next.push_back(std::move(up));
    }
  }
  for (auto& up : next) executor_->PostAt(absl::Now(), [this, up] { Begin(up); });
  executor_->PostAt(absl::Now(), [this] { TellQueue(); });
}

}  // namespace ply::lobby
