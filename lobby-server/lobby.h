// The lobby's use cases, independent of gRPC: creating, joining, listing and getting matches,
// moves, draws and resignations, and watching. Each is a few steps over the parts that do the
// work: match/cache (memory as a cache of the database, and which instance drives a match),
// match/rules (the one check of a move), match/clock (clocks from stored times), bots/driver
// (bot seats), events/fanout (watchers) and convert (the proto messages).
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
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/registry/any_game.h"
#include "lobby-server/bot_targets.h"
#include "lobby-server/bots/driver.h"
#include "lobby-server/executor.h"
#include "lobby-server/match/cache.h"
#include "lobby-server/match/clock.h"
#include "lobby-server/match/live_match.h"
#include "lobby-server/metrics.h"
#include "lobby-server/players/accounts.h"
#include "lobby-server/players/matchmaker.h"
#include "lobby-server/players/presence.h"
#include "lobby-server/players/quotas.h"
#include "lobby-server/players/rematches.h"
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
  // Quick pairing: the rating gap accepted at first, how fast it widens, its most; and how
  // long a player waits before a bot is offered.
  double pair_base_gap = 50;
  double pair_gap_per_s = 10;
  double pair_max_gap = 400;
  absl::Duration pair_bot_after = absl::Seconds(20);
  // A queue entry its stream has not marked alive for this long (the stream or its instance is
  // gone; a live one marks it every second) is paired with nobody and removed.
  absl::Duration pair_entry_lifetime = absl::Seconds(5);
  // Quotas, so that no client can hold the bots or fill the lobby (0 turns each off): bot seats
  // in play over all clients; per client, bot seats in matches it created that are waiting or in
  // play, bot-vs-bot matches, and matches waiting for players.
  int max_bot_seats = 0;
  int client_bot_seats = 0;
  int client_bot_matches = 0;
  int client_waiting_matches = 0;
  // Per client, matches it created that are waiting or in play, of every kind.
  int client_open_matches = 0;
  // The quotas apply per address too, at this multiple of a player's (players/quotas.h); and
  // an address may register this many players an hour (0: no bound).
  int address_quota_multiple = 4;
  int client_registrations_per_hour = 0;
  // A match nobody joins within this is cancelled (no result); zero: never.
  absl::Duration waiting_expiry = absl::ZeroDuration();
  // Matches without people: bots move no sooner than this after the position arose, and search
  // at most bot_vs_bot_budget_ms a move (0: as the level says).
  int64_t bot_vs_bot_min_pacing_ms = 0;
  int64_t bot_vs_bot_budget_ms = 0;
  // Moves asked of the bots at once for one client's games against people, its timed games
  // first (bots/driver.h; 0: no bound).
  int client_bot_calls = 0;
  // The same for all the clients of one network (BotDriverOptions::network_bot_calls).
  int network_bot_calls = 0;
  // Presence and abandonment. An untimed match whose side to move has been away this long
  // (counted from when it was last seen or its turn began, whichever is later) may be claimed
  // by the opponent (zero: never); a match whose side to move is a person that has not made
  // its first move within abort_after of its turn is aborted, with no result (zero: never).
  absl::Duration claim_after = absl::Minutes(2);
  absl::Duration abort_after = absl::Minutes(2);
  // A match made by pairing whose game has not begun (fewer than two moves) is aborted, with
  // no result, when one of its players has not come to it within this of the pairing: no
  // stream carrying the seat's token and no call with it (a client that closed its pairing
  // stream just as it was paired, a web page closed a moment before). Its opponent would
  // otherwise wait abort_after for the first move (zero: never).
  absl::Duration no_show_after = absl::Seconds(15);
  // Who did not come may not pair again for this long, doubled for each further no-show of the
  // last day, at most an hour (players/matchmaker.h; zero: no wait).
  absl::Duration no_show_cooldown = absl::Minutes(1);
  // In a match made by pairing, a player who came but has not made their first move this long
  // into their turn has the match aborted (no result) and waits as one who did not come: one
  // look at the seat and no move dodged the opponent, who waited abort_after (zero: only
  // abort_after applies).
  absl::Duration paired_first_move = absl::Seconds(30);
  // A timed match this instance claims (its owner died or stopped: a restart, a crash) gives
  // the side to move at least this much of the time it had when its turn began: nobody could
  // move while no instance served the match, and a lobby's downtime decided rated games on
  // time (zero: nothing given back).
  absl::Duration reclaim_clock_floor = absl::Seconds(15);
  // An untimed match against a bot whose person has been gone this long on their move ends by
  // rule: abandoned, a loss when rated, no result when casual; its bot seats are freed (zero:
  // never). A timed match ends on its clock instead.
  absl::Duration abandon_after = absl::Minutes(5);
  // An untimed match whose side to move, a person, has spent this long on one move ends like
  // one whose person has gone, present or not: against a bot by rule, against a person by the
  // opponent's claim (zero: never). Presence alone (an open page, a call now and then) would
  // otherwise hold a lost game, and its bot seat, open for ever.
  absl::Duration max_turn = absl::Minutes(30);
  // A seat is present while a stream with its token is open, and for this long after it was
  // last seen (a stream closing, a call): a reconnection within it goes unannounced.
  absl::Duration presence_grace = absl::Seconds(5);
  // How often the watched matches' presence is looked at (and calls' sightings written, one
  // statement for all of them); and how often this instance says its open streams are alive:
  // the streams of an instance silent for three beats (it died) no longer hold their seats.
  absl::Duration presence_poll = absl::Seconds(1);
  absl::Duration presence_beat = absl::Seconds(10);
  // What time it is for the match logic (clocks, move times, events), in ms since the Unix
  // epoch. Tests set their own, so that a clock runs out without anyone waiting; timers still
  // run on the executor's wall clock, due as far ahead as this source says.
  NowMsFn now_ms = WallClockMs;
};

// One Pair stream as the lobby sees it.
class PairSink {
 public:
  virtual ~PairSink() = default;
  // False when the stream is gone.
  virtual bool Send(v1::PairEvent event) = 0;
  virtual void Finish(const absl::Status& status) = 0;
  // The client closed the stream (left the queue).
  virtual bool Gone() = 0;
  // Runs `fn` (once) when the client closes the stream, at once if it has.
  virtual void OnGone(std::function<void()> fn) = 0;
};

class Lobby : private BotDriver::Host {
 public:
  // `bots` may be null: bot seats are then refused.
  Lobby(MatchStore* store, BotTargets* bots, Executor* executor, LobbyOptions options);
  ~Lobby() override;

  // Joins the other instances (if any) and takes over the matches that go on without a call
  // (clocks, bots) and have no owner, then keeps looking for such matches.
  absl::Status Resume();
  // Leaves: stops asking bots and arming timers, hands every owned match back at once (another
  // instance takes them over), and closes the watch streams with UNAVAILABLE so that clients
  // reconnect elsewhere. Calls in flight still finish (the executor is stopped by its owner).
  void Shutdown();
  // Whether other lobby instances share the database, as far as this one knows.
  bool HasPeers() const { return cache_.HasPeers(); }
  LobbyMetrics& metrics() { return metrics_; }
  // The Prometheus page.
  std::string MetricsText();

  // Every game with its levels, each level with the bot's rating (its own once rated games
  // have moved it, the calibration ladder's until then).
  v1::ListGamesResponse ListGames();
  // `client` names the caller for the quotas ("" for a client they do not apply to).
  // `player_key` (the x-ply-player metadata, "" when there was none) makes the seat taken
  // with take_seat that player's.
  absl::StatusOr<v1::CreateMatchResponse> CreateMatch(const v1::CreateMatchRequest& request,
                                                      const std::string& client = "",
                                                      const std::string& player_key = "");
  absl::StatusOr<v1::ListMatchesResponse> ListMatches(const v1::ListMatchesRequest& request);
  absl::StatusOr<v1::Match> GetMatch(int64_t match_id);
  // GetMatch without blocking, for the gRPC thread: false when the match is not in memory as
  // the database has it, or busy; GetMatch then loads or waits.
  bool TryGetMatch(int64_t match_id, v1::Match* out);
  absl::StatusOr<v1::JoinMatchResponse> JoinMatch(const v1::JoinMatchRequest& request,
                                                  const std::string& player_key = "");
  // Players: registering (no key) or logging in again (the key), a profile, a player's
  // matches, a game's leaderboard.
  // `client` (the caller's address key, "" when exempt) bounds the registrations per address.
  absl::StatusOr<v1::LoginResponse> Login(const v1::LoginRequest& request,
                                          const std::string& player_key,
                                          const std::string& client = "");
  absl::StatusOr<v1::Player> GetPlayer(const v1::GetPlayerRequest& request);
  absl::StatusOr<v1::ListMatchesResponse> ListPlayerMatches(
      const v1::ListPlayerMatchesRequest& request);
  absl::StatusOr<v1::LeaderboardResponse> Leaderboard(const v1::LeaderboardRequest& request);
  // Quick pairing for the key's player: waits in the queue while `sink` is open (see
  // LobbyService.Pair); an error before the player is queued is returned.
  absl::Status Pair(const v1::PairRequest& request, const std::string& player_key,
                    std::shared_ptr<PairSink> sink);
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
  // A rematch offered, accepted, withdrawn or declined by a player of a finished match (the
  // seat token of that match): see LobbyService.OfferRematch.
  absl::StatusOr<v1::OfferRematchResponse> OfferRematch(const v1::OfferRematchRequest& request,
                                                        const std::string& token);
  // Matches in memory now.
  size_t CachedMatches();
  // Sends the first events to `sink` and, unless the match is over, keeps it for later ones.
  // With a seat `token` (which must be one of this match's), the stream holds that seat's
  // presence: `*seat` is then set to it (else -1), and WatchEnded must follow when the stream
  // ends.
  absl::Status Watch(int64_t match_id, std::optional<int> after_ply,
                     std::shared_ptr<EventSink> sink, const std::string& token = "",
                     int* seat = nullptr);
  void WatchEnded(int64_t match_id, int seat);
  // The token's seat holder is here: seen now (written with the next PresenceTick, which every
  // instance reads), so a claim against the seat waits. Whether the match is still on.
  absl::StatusOr<v1::HereResponse> Here(int64_t match_id, const std::string& token);
  // The win (or with `draw`, a draw) for the token's seat when the untimed match's side to
  // move has been away for claim_after; a clear FAILED_PRECONDITION before that.
  absl::StatusOr<v1::Match> ClaimVictory(int64_t match_id, bool draw, const std::string& token);

 private:
  struct PairState;
  // One look at a waiting player's entry: paired (by anyone), pair now, offer a bot, or wait on.
  void PairTick(std::shared_ptr<PairState> state);
  void PairDelivered(PairState& state, const Pairing& pairing);
  // A paired match one of whose players has not come to it (no stream with the seat's token,
  // no call) within no_show_after of the pairing, and whose game has not begun, is aborted.
  void AbortIfNoShow(int64_t match_id);
  // A paired match whose side to move, a person, has not made their first move within
  // paired_first_move of their turn is aborted; looked at again when a turn is not over yet.
  void AbortIfNoFirstMove(int64_t match_id);
  // On claiming `live`: the side to move gets back time up to reclaim_clock_floor.
  void GiveBackReclaimedTurn(LiveMatch& live);
  // The new match of a pairing (both seats taken, the first move to the
  // player who began fewer of their last rated games of the game) and its tokens.
  absl::StatusOr<PairedMatch> MakePairedMatch(const PairState& state, const QueueEntry& me,
                                              const QueueEntry& them);
  // Starts each bot level's player at its ladder rating (players/bot_ratings.cc).
  absl::Status SeedBotRatings();
  void ShowLiveBotRatings(v1::ListGamesResponse& response);
  // A guest's display name (CleanDisplayName), or why not: refused when it is (or looks like) a
  // registered player's.
  absl::StatusOr<std::string> GuestName(std::string_view raw);
  // The player whose key this is: none for "", UNAUTHENTICATED for a key no player has.
  absl::StatusOr<std::optional<PlayerRecord>> PlayerOf(const std::string& key);
  using Fresh = MatchCache::Fresh;
  int64_t NowMs() const { return options_.now_ms(); }
  // BotDriver::Host, and the use cases' way to a match: the cache's With.
  absl::Status WithMatch(int64_t id, const std::function<absl::Status(LiveMatch&)>& fn) override;
  // The seat whose token this is, or the error to answer.
  absl::StatusOr<int> Authenticate(const LiveMatch& live, const std::string& token);
  // Authenticate, then the match must be active and not past a flag fall: the seat, or why not.
  absl::StatusOr<int> SeatThatMayAct(LiveMatch& live, const std::string& token, int64_t now_ms);
  // What a seat holder's request on its match opens with (resign, draw offer, claim): the seat
  // the token may act for, marked seen, then `act(live, seat, now_ms)` under the match's lock;
  // the match as it stands afterwards, or the first error.
  absl::StatusOr<v1::Match> WithActingSeat(
      int64_t match_id, const std::string& token,
      const std::function<absl::Status(LiveMatch&, int, int64_t)>& act);

  absl::StatusOr<MoveRecord> CommitMove(LiveMatch& live, int seat, std::unique_ptr<AnyGame> after,
                                        int64_t think_ms, std::string bot_json) override;
  // TryMakeMove's commit has landed (or failed, `stored`): memory follows, the waiters go on,
  // and the answer for the player is returned.
  struct PendingMove;
  absl::StatusOr<v1::MakeMoveResponse> Landed(LiveMatch& live, PendingMove& move,
                                              const absl::Status& stored);
  // Memory after the commit landed: the record, the game, then watchers, clock and bot.
  void ApplyMove(LiveMatch& live, const MoveCommit& commit, std::unique_ptr<AnyGame> after);
  // A commit failed: nothing is acknowledged and, whether or not the write landed, the next
  // use reloads.
  void CommitFailed(LiveMatch& live, const absl::Status& failure);
  absl::Status CommitFinish(LiveMatch& live, MatchResult result,
                            std::vector<int64_t> clocks) override;
  // What follows any change: watchers told of the end, the clock armed, a bot asked.
  void AfterChange(LiveMatch& live);
  // Ends the match on time if the side to move has flagged; returns whether it did.
  bool FlagIfExpired(LiveMatch& live, int64_t now_ms);

  // Refuses a match that would take the bot seats in play past max_bot_seats.
  // `scarce` (when given) says whether the match would take one of the last quarter of
  // max_bot_seats, which are kept for clients that hold hardly any (Quotas::For).
  absl::Status CheckBotCapacity(const MatchRecord& rec, bool* scarce = nullptr);
  // Cancels the waiting matches past waiting_expiry, then schedules itself again.
  void ExpireTick();
  // Aborts the matches whose first move is overdue (abort_after), then schedules itself again.
  void AbortTick();
  // Ends the owned matches against a bot (timed or not) whose person has been gone past
  // abandon_after on their move, or has spent max_turn on it, then schedules itself again.
  void AbandonTick();
  // Whether the side to move of `live` has been on one move for max_turn (timed or not: a
  // claim refuses timed matches before it asks).
  bool TurnOverlong(const LiveMatch& live, int64_t now_ms) const;
  // The end of `live` by abandonment when its people have all been gone past abandon_after
  // (`found`: its seats' presence over every instance, or nothing without presence); else
  // nothing.
  std::optional<MatchResult> AbandonedResult(const LiveMatch& live,
                                             const std::vector<SeatPresence>* found,
                                             int64_t now_ms);
  // Writes the sightings (and this instance's beat), reads the presence of every watched match
  // in play, and tells their watchers who left and who came back; then schedules itself again.
  void PresenceTick();
  // `live`'s presence from what the database says (`found`, its seats' rows), with events for
  // the changes.
  void UpdatePresence(LiveMatch& live, const std::vector<SeatPresence>& found, int64_t now_ms);
  void RetryLater(int64_t id, absl::Duration delay) override;
  absl::Status DeclineDraw(LiveMatch& live, int seat, const std::string& text) override;
  // After a failed commit whose outcome is unknown (UNAVAILABLE): reload the match shortly.
  void ReloadSoon(int64_t id, const absl::Status& failure);
  void CheckFlag(int64_t id, int ply);
  // Sends watchers a ClockUpdate and schedules the next one while the match is on.
  // Sends the watchers of this copy a ClockUpdate and schedules the next while it is watched
  // and in play; a copy evicted or replaced meanwhile ends its chain.
  void ClockTick(const std::weak_ptr<LiveMatch>& copy);
  // Starts the chain of clock updates of a watched, clocked match in play, if not running.
  void StartClockTicks(LiveMatch& live);

  MatchStore* store_;
  Executor* executor_;
  const LobbyOptions options_;
  const Quotas quotas_;
  std::atomic<bool> stopping_{false};
  LobbyMetrics metrics_;
  MatchCache cache_;
  BotDriver bots_;
  // Who holds which seat, over every instance (players/presence.h).
  Presence presence_;
  // The pairing queue's rules (players/matchmaker.h).
  Matchmaker matchmaker_;
  // Players' accounts and guests' names (players/accounts.h).
  Accounts accounts_;
  // Rematch offers' rules (players/rematches.h).
  Rematches rematches_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_LOBBY_H_
