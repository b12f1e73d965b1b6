// The lobby's match logic, independent of gRPC: creating and joining matches, validating and
// committing moves, clocks, draws and resignations, driving bot seats through ply-bot, and
// feeding every watcher of a match the same event sequence.
//
// The database is the source of truth. A match in memory is a cache of its rows: a change is
// written (one transaction) before memory changes and before anyone hears of it, and a match
// whose last write failed or raced another writer is reloaded before it is used again. On start
// every active match with a clock or a bot seat is loaded, its clock re-armed and its bot (if
// one is to move) asked again, so a restarted lobby continues where the database says it
// stopped; any other match is loaded when a call first names it.
//
// Several instances may share one database. Each announces its changes (the store's NOTIFY)
// and hears the others': a cached match they changed is marked behind and, when someone here
// watches or drives it, reloaded at once, its watchers getting the moves they missed. The
// database stays the arbiter (every write is conditional on the ply), so a cache that is
// behind is refused and reloaded, never trusted. Reads that answer from memory (GetMatch,
// Watch's first snapshot) first compare the match's version with the database's when other
// instances are alive. The timed work of a match (asking its bot, flagging its clock) is done
// by its owner only (MatchStore::Own); matches nobody owns (their owner died or left) are
// claimed every claim_interval, and at once when an instance announces it is leaving.
//
// Locking: one mutex per match, held across that match's database writes (moves of one match
// are sequential anyway); the map of matches has its own short-held mutex. Bot replies, clock
// flags and retries run as tasks on the executor, never on gRPC threads. The one exception is
// a player's plain legal move (TryMakeMove): checked on the gRPC thread without waiting, then
// committed by the store's writer with the match marked `committing` (others wait for it), so
// that a move costs no thread hand-off besides the database's and commits batch together.
#ifndef PLY_LOBBY_SERVER_LOBBY_H_
#define PLY_LOBBY_SERVER_LOBBY_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bot-service/bot_client.h"
#include "engine/registry/any_game.h"
#include "lobby-server/bot_targets.h"
#include "lobby-server/executor.h"
#include "lobby-server/metrics.h"
#include "lobby-server/storage/store.h"
#include "ply/v1/lobby.pb.h"

namespace ply::lobby {

struct LobbyOptions {
  // Bot pacing when CreateMatch does not say.
  int64_t default_bot_pacing_ms = 500;
  int64_t max_bot_pacing_ms = 60000;
  // The bot call's deadline is its search budget plus this.
  int64_t bot_deadline_margin_ms = 1000;
  // A bot seat that gets no move for this long (without a clock to end it first) forfeits.
  absl::Duration bot_give_up_after = absl::Minutes(10);
  // Events a watcher may have queued before it is dropped as too slow.
  int watcher_queue = 1024;
  // Interval of ClockUpdate events for watchers of a match with clocks; zero turns them off.
  absl::Duration clock_event_interval = absl::Seconds(10);
  // Matches kept in memory beyond the live ones (finished matches with no watcher are evicted).
  size_t cache_size = 2000;
  // How often this instance looks for matches nobody owns, and how many it takes at a time
  // (several instances claiming at once then share them out).
  absl::Duration claim_interval = absl::Milliseconds(500);
  int claim_batch = 64;
};

// One WatchMatch stream as the lobby sees it.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Queues `event` (the sink numbers it). False when the sink is closed or cannot keep up; the
  // lobby then forgets it.
  virtual bool Push(v1::MatchEvent event) = 0;
  // Ends the stream once the queued events are delivered.
  virtual void Close(const absl::Status& status) = 0;
};

class Lobby {
 public:
  // `bots` may be null: bot seats are then refused.
  Lobby(MatchStore* store, BotTargets* bots, Executor* executor, LobbyOptions options);
  ~Lobby();

  // Joins the other instances (if any) and takes over the matches that go on without a call
  // (clocks, bots) and have no owner, then keeps looking for such matches.
  absl::Status Resume();
  // Leaves: stops asking bots and arming timers, hands every owned match back at once (another
  // instance takes them over), and closes the watch streams with UNAVAILABLE so that clients
  // reconnect elsewhere. Calls in flight still finish (the executor is stopped by its owner).
  void Shutdown();
  // Whether other lobby instances share the database, as far as this one knows.
  bool HasPeers() const { return peers_.load(std::memory_order_relaxed) > 0; }
  LobbyMetrics& metrics() { return metrics_; }
  // The Prometheus page.
  std::string MetricsText();

  v1::ListGamesResponse ListGames() const;
  absl::StatusOr<v1::CreateMatchResponse> CreateMatch(const v1::CreateMatchRequest& request);
  absl::StatusOr<v1::ListMatchesResponse> ListMatches(const v1::ListMatchesRequest& request);
  absl::StatusOr<v1::Match> GetMatch(int64_t match_id);
  // GetMatch without blocking, for the gRPC thread: false when the match is not in memory as
  // the database has it, or busy; GetMatch then loads or waits.
  bool TryGetMatch(int64_t match_id, v1::Match* out);
  absl::StatusOr<v1::JoinMatchResponse> JoinMatch(const v1::JoinMatchRequest& request);
  // `token` is the seat token from the call's metadata ("" when there was none).
  absl::StatusOr<v1::MakeMoveResponse> MakeMove(const v1::MakeMoveRequest& request,
                                                const std::string& token);
  // MakeMove without blocking, for the gRPC thread: when the match is in memory, free, and the
  // move plainly legal for the caller, queues its commit and returns true; `done` then runs
  // with MakeMove's answer once the commit has landed (on a database writer thread). Returns
  // false, having changed nothing, when MakeMove would have to wait or answer an error.
  bool TryMakeMove(const v1::MakeMoveRequest& request, const std::string& token,
                   std::function<void(absl::StatusOr<v1::MakeMoveResponse>)> done);
  // MakeMove for the executor, answering through `done` like TryMakeMove: brings the cached
  // copy up to date first (another instance may have moved the match on), then commits
  // without holding the thread when the move is plainly legal; MakeMove otherwise.
  void MakeMoveAsync(const v1::MakeMoveRequest& request, const std::string& token,
                     std::function<void(absl::StatusOr<v1::MakeMoveResponse>)> done);
  absl::StatusOr<v1::Match> Resign(int64_t match_id, const std::string& token);
  absl::StatusOr<v1::Match> OfferDraw(int64_t match_id, const std::string& token);
  // Matches in memory now.
  size_t CachedMatches();
  // Sends the first events to `sink` and, unless the match is over, keeps it for later ones.
  absl::Status Watch(int64_t match_id, std::optional<int> after_ply,
                     std::shared_ptr<EventSink> sink);

 private:
  struct Live;
  // The match in memory, if any (not loaded, not locked).
  std::shared_ptr<Live> Cached(int64_t id);
  // How much WithMatch trusts a cached copy: as it is (writes are checked by the database),
  // after comparing its version with the database's when other instances may have changed it,
  // or not at all.
  enum class Fresh { kCached, kChecked, kReload };
  // Runs `fn` on match `id` with its lock held, loading (or reloading a stale copy) first. When
  // `fn` loses a race to another writer (ABORTED: the cache was behind), the match is reloaded
  // and `fn` runs once more on the fresh copy.
  absl::Status WithMatch(int64_t id, const std::function<absl::Status(Live&)>& fn,
                         Fresh fresh = Fresh::kCached);
  absl::Status Reload(Live& live);
  // With map_mu_ held: when the cache is at its bound, forgets the finished matches nobody is
  // using or watching (a later call loads them again).
  void MakeRoomLocked();
  // The seat whose token this is, or the error to answer.
  absl::StatusOr<int> Authenticate(Live& live, const std::string& token);
  absl::Status CheckActive(const Live& live) const;
  // Authenticate, then the match must be active and not past a flag fall: the seat, or why not.
  absl::StatusOr<int> SeatThatMayAct(Live& live, const std::string& token, int64_t now_ms);

  // Commits a move already validated on `after` (the game with the move played).
  absl::StatusOr<MoveRecord> CommitMove(Live& live, int seat, std::unique_ptr<AnyGame> after,
                                        int64_t think_ms, std::string bot_json);
  // What committing `after`'s last move by `seat` writes.
  MoveCommit PrepareMove(const Live& live, int seat, const AnyGame& after, int64_t think_ms,
                         std::string bot_json, int64_t now_ms) const;
  // TryMakeMove's commit has landed (or failed, `stored`): memory follows, the waiters go on,
  // and the answer for the player is returned.
  struct PendingMove;
  absl::StatusOr<v1::MakeMoveResponse> Landed(Live& live, PendingMove& move,
                                              const absl::Status& stored);
  // Memory after the commit landed: the record, the game, then watchers, clock and bot.
  void ApplyMove(Live& live, const MoveCommit& commit, std::unique_ptr<AnyGame> after);
  absl::Status CommitFinish(Live& live, MatchResult result, std::vector<int64_t> clocks);
  // What follows any change: watchers told of the end, the clock armed, a bot asked.
  void AfterChange(Live& live);
  // Time left on `seat`'s clock now.
  int64_t ClockNow(const Live& live, int seat, int64_t now_ms) const;
  // Every seat's ClockNow, by seat.
  std::vector<int64_t> ClocksNow(const Live& live, int64_t now_ms) const;
  // Ends the match on time if the side to move has flagged; returns whether it did.
  bool FlagIfExpired(Live& live, int64_t now_ms);

  // Other instances' changes (on the executor): matches behind are marked, and reloaded now
  // when watched or owned here.
  void OnPeerChanges(const std::vector<MatchChange>& changes);
  // Every cached match may be behind (announcements were lost).
  void ResyncAll();
  // The store lost this instance's ownerships: stop driving every match.
  void OwnershipLost();
  // Claims up to claim_batch ownerless matches; returns how many it took.
  int ClaimOrphans();
  // ClaimOrphans and a look at the peers, every claim_interval.
  void ClaimTick();
  // Takes ownership of a live match that has timed work, if nobody has it.
  void TryOwn(Live& live);

  void RequestBot(Live& live);
  void OnBotReply(int64_t id, int ply, absl::StatusOr<v1::ChooseMoveResponse> reply,
                  int64_t think_ms);
  void RetryLater(int64_t id, absl::Duration delay);
  // After a failed commit whose outcome is unknown (UNAVAILABLE): reload the match shortly.
  void ReloadSoon(int64_t id, const absl::Status& failure);
  void CheckFlag(int64_t id, int ply);
  // Sends watchers a ClockUpdate and schedules the next one while the match is on.
  void ClockTick(int64_t id);

  v1::Match ToProto(const Live& live, int64_t now_ms) const;
  void Broadcast(Live& live, v1::MatchEvent event);
  // The game_over event of a finished match, with its final clocks.
  v1::MatchEvent GameOverEvent(const Live& live) const;
  void CloseWatchers(Live& live);
  std::string SideName(const Live& live, int seat) const;

  MatchStore* store_;
  BotTargets* bots_;
  Executor* executor_;
  const LobbyOptions options_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> peers_{0};
  std::atomic<bool> claim_scheduled_{false};
  LobbyMetrics metrics_;

  std::mutex map_mu_;
  std::map<int64_t, std::shared_ptr<Live>> matches_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_LOBBY_H_
