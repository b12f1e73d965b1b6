// Post-game analysis in the lobby (LobbyService.AnalyzeMatch): the positions of a match are
// judged by the bot instances in parallel (ChooseMove with `analysis` set, spread over every
// instance by BotClient's round_robin), the verdicts assembled by the engine (engine/analysis),
// and the result stored with the match, so that a match is analysed once.
//
// Once per match, across instances: a request first claims the match's analysis row
// (MatchStore::ClaimAnalysis). Whoever holds it analyses and renews the claim as positions come
// in; others wait, polling the row, and answer with the stored result; a claim not renewed
// within its lease (its lobby died) is taken over. A failed analysis gives its claim up.
//
// Who may ask: anyone, for a finished match; for an active one only when every seat is a bot
// (spectators of bot games), and such a partial analysis is not stored. A match with a person
// in it is never analysed while it is being played.
//
// Following a bot match: the verdicts of a match's positions are kept (in memory, for the
// --analysis_kept_matches matches used last), so that asking again as the match goes on judges
// only the positions played since, whoever asks (and the one that was the last again when the
// move played there is not the judge's best: that move needs a value of its own); the analysis
// made once the match is over takes them too. Such an update (at most kUpdatePositions new
// positions) does not count as a fresh analysis against the hourly limit.
//
// Capacity: analysis is background work. An instance runs --analysis_max_running analyses at
// once; more wait in a queue (told their place), clients taking turns, and are refused only when
// the queue is full. Bots serve people's moves first and refuse background work beyond their
// share (RESOURCE_EXHAUSTED): a position refused so is asked again after a pause, without limit
// while its client waits, so that busy bots slow an analysis down and never fail it. Per client
// (its address, and its player when it names one) analyses running or waiting at once and fresh
// analyses started in an hour are limited; a stored analysis costs nothing and is never refused.
//
// Threads: Analyze runs on the executor; bot replies arrive on gRPC threads and never block
// there (database work is posted to the executor).
#ifndef PLY_LOBBY_SERVER_ANALYSIS_ANALYZER_H_
#define PLY_LOBBY_SERVER_ANALYSIS_ANALYZER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "lobby-server/analysis/kept_verdicts.h"
#include "lobby-server/bot_targets.h"
#include "lobby-server/executor.h"
#include "lobby-server/lobby.h"
#include "lobby-server/storage/store.h"
#include "ply/v1/lobby.pb.h"

namespace ply::lobby {

struct AnalyzerOptions {
  // Per position: the bots' time budget, depth cap and node budget (0: none). The node budget
  // is the same work on any machine at any load: with a time budget that never runs out first,
  // the verdicts do not depend on how fast the bots are (ChooseMoveRequest.max_nodes; Reversi's
  // solver plans its reach from the smaller of the two, Reversi::PlanSolve).
  int64_t budget_ms = 1000;
  int max_depth = 0;
  int64_t max_nodes = 0;
  // Positions of one analysis in flight at once (spread over the instances).
  int parallel = 4;
  // Analyses this instance runs at once; more wait in its queue, up to max_queued, beyond which
  // requests are refused with RESOURCE_EXHAUSTED.
  int max_running = 4;
  int max_queued = 64;
  // Per client (address; player): analyses running or waiting at once, and analyses started in
  // any hour (stored ones served from the database do not count). 0 turns a limit off.
  int client_in_flight = 2;
  int client_per_hour = 30;
  // A position every bot refused as busy is asked again after this long, doubling up to 8 times
  // as long while they stay busy.
  int64_t busy_retry_ms = 250;
  // A claim not renewed for this long may be taken over; waiters look this often.
  int64_t lease_ms = 30000;
  int64_t poll_ms = 250;
  // Tries per position before the analysis fails.
  int attempts = 3;
  // Names this instance in claims.
  std::string instance = "lobby";
  // Matches whose verdicts are kept for the next request (least recently used dropped first).
  int kept_matches = 256;
  // Where the analysis's bot calls are counted (none: not counted).
  LobbyMetrics* metrics = nullptr;
};

// One AnalyzeMatch stream as the analyzer sees it.
class AnalysisSink {
 public:
  virtual ~AnalysisSink() = default;
  // False when the stream is gone.
  virtual bool Send(v1::AnalyzeMatchEvent event) = 0;
  virtual void Finish(const absl::Status& status) = 0;
  // The client closed the stream.
  virtual bool Gone() = 0;
};

// Who asks, for the per-client limits: the client's address key and, when the call named a
// player, its player key. Exempt clients are not limited (they still take their turn).
struct AnalysisClient {
  std::string address;
  std::string player;
  bool exempt = false;
};

class Analyzer {
 public:
  // An analysis that judges no more new positions than this is an update of one made before.
  static constexpr int kUpdatePositions = 4;

  // `bots` may be null: analyses then fail with UNAVAILABLE.
  Analyzer(Lobby* lobby, MatchStore* store, BotTargets* bots, Executor* executor,
           AnalyzerOptions options);
  // Cancels the bot calls in flight and waits for their callbacks.
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // On the executor. An error found before anything was sent is returned (the caller finishes
  // the stream with it); later ones finish the sink.
  absl::Status Analyze(int64_t match_id, bool stored_only, std::shared_ptr<AnalysisSink> sink,
                       AnalysisClient client = {});

 private:
  struct Job;
  struct ClientUse {
    // Analyses running or queued, and the times fresh ones were admitted in the last hour.
    int in_flight = 0;
    int running = 0;
    std::deque<absl::Time> starts;
  };
  // Claims the match's analysis, answers with the stored one, or waits for another holder.
  void Claim(const std::shared_ptr<Job>& job);
  // Admits the analysis (per-client limits) and runs it or queues it.
  void Start(const std::shared_ptr<Job>& job);
  // Fills `job`'s verdicts kept from before and leaves in `positions` only the positions
  // still to judge.
  void TakeKept(Job& job);
  // Under mu_: the per-client limits' verdict on `job`, counting it when admitted.
  absl::Status AdmitLocked(Job& job, absl::Time now);
  // Under mu_: `job` no longer counts against its client.
  void ReleaseLocked(Job& job);
  // Under mu_: the queue's order of service (indices into queue_), clients taking turns.
  std::vector<size_t> QueueOrderLocked();
  // Tells every queued job its place.
  void TellQueue();
  // Every second while jobs wait: drops those whose client left, renews their claims, tells
  // the rest their place.
  void Sweep();
  // Runs `job` (admitted, counted as running).
  void Begin(const std::shared_ptr<Job>& job);
  // Starts calls until `parallel` are in flight or none is left.
  void Launch(const std::shared_ptr<Job>& job);
  void Ask(const std::shared_ptr<Job>& job, int position);
  void Judged(const std::shared_ptr<Job>& job, int position,
              absl::StatusOr<v1::ChooseMoveResponse> reply);
  void Complete(const std::shared_ptr<Job>& job);
  // What the bots took of an analysis just now (its window), for the next to begin with.
  void Learned(int window);
  void Fail(const std::shared_ptr<Job>& job, const absl::Status& status);
  // The job stops running (done or failed).
  void Ended(Job& job);

  Lobby* lobby_;
  MatchStore* store_;
  BotTargets* bots_;
  Executor* executor_;
  const AnalyzerOptions options_;
  std::mutex mu_;
  std::condition_variable idle_;
  bool stopping_ = false;
  int running_ = 0;
  int calls_ = 0;
  // The positions in flight the bots last took from one analysis (0: not known yet), and when
  // (Unix ms): where an analysis starting within half a minute begins, rather than learning the
  // bots' room again from refusals (later, the room may have grown: it begins at the full
  // --analysis_parallel).
  std::atomic<int> learned_window_{0};
  std::atomic<int64_t> learned_ms_{0};
  // Admitted analyses waiting for a place, in arrival order.
  std::vector<std::shared_ptr<Job>> queue_;
  bool sweeping_ = false;
  std::map<std::string, ClientUse> clients_;
  // Jobs with bot calls, so that the destructor can cancel them.
  std::vector<std::weak_ptr<Job>> jobs_;
  uint64_t next_holder_ = 0;
  KeptVerdicts kept_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_ANALYSIS_ANALYZER_H_
