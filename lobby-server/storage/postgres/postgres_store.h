// MatchStore on PostgreSQL through libpqxx 6.4: a small pool of connections, each with the
// lobby's prepared statements; versioned migrations applied at start-up under an advisory lock.
// A connection that breaks (the server restarted, the network dropped) is thrown away and a new
// one is opened on the next call, so the lobby reconnects by itself; meanwhile calls answer
// UNAVAILABLE.
//
// Moves are group-committed: AppendMove and AppendMoveAsync queue the move, and a writer thread
// commits every queued move of distinct matches in one statement. Under load that turns one
// round trip, one commit and one WAL flush per move into one per batch; alone, a move still
// goes out at once.
#ifndef PLY_LOBBY_SERVER_STORAGE_POSTGRES_POSTGRES_STORE_H_
#define PLY_LOBBY_SERVER_STORAGE_POSTGRES_POSTGRES_STORE_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "lobby-server/storage/store.h"

namespace ply::lobby {

struct PostgresOptions {
  // A libpq connection string or URI: "host=127.0.0.1 port=5432 dbname=ply user=postgres" or
  // "postgresql://postgres@127.0.0.1:5432/ply".
  std::string url;
  // Connections kept open at most for calls (one per concurrent database call), besides one
  // per move writer.
  int pool_size = 8;
  // How long a call waits for a free connection before answering UNAVAILABLE.
  absl::Duration acquire_timeout = absl::Seconds(5);
  // Bounds connecting and each statement, so a hung database turns into UNAVAILABLE.
  int connect_timeout_s = 3;
  int statement_timeout_ms = 5000;
  // Threads that commit moves, each taking every move queued (up to max_append_batch, from
  // different matches) into one statement: one round trip and one commit for many moves.
  int append_writers = 2;
  int max_append_batch = 64;
  // How long a move whose commit failed for want of the database (a restart, a failover to a
  // standby, a connection that broke during the commit) is read back and written again before
  // the caller is told it is unknown. Within it, the caller's answer is the truth.
  absl::Duration settle_window = absl::Seconds(5);
};

class PostgresStore final : public MatchStore {
 public:
  explicit PostgresStore(PostgresOptions options);
  ~PostgresStore() override;

  // The schema version this build migrates to.
  static int SchemaVersion();
  // Every SQL statement a connection prepares, by name: the whole of what the store asks of
  // the database besides migrating (tests/shard_check_test.cc reads it).
  static std::vector<std::pair<std::string, std::string>> Statements();

  // Moves the writers committed so far, and how many batches they took them in.
  struct AppendStats {
    int64_t moves = 0;
    int64_t batches = 0;
  };
  AppendStats append_stats() const { return {appended_moves_.load(), append_batches_.load()}; }

  absl::Status Migrate() override;
  absl::StatusOr<int64_t> CreateMatch(const MatchRecord& match) override;
  absl::StatusOr<int64_t> CreateMatchWithin(const MatchRecord& match,
                                            const QuotaCheck& check) override;
  absl::StatusOr<bool> TakeSeat(int64_t match_id, int seat, const std::string& name,
                                const std::string& token_hash, int64_t now_ms,
                                int64_t player_id = 0, SeatRecord* taken = nullptr) override;
  absl::Status AppendMove(int64_t match_id, const MoveCommit& commit) override;
  void AppendMoveAsync(int64_t match_id, MoveCommit commit,
                       std::function<void(absl::Status)> done) override;
  absl::Status Finish(int64_t match_id, const FinishCommit& commit) override;
  absl::Status SetDrawOffer(int64_t match_id, int expected_ply, int seat) override;
  absl::StatusOr<MatchRecord> LoadMatch(int64_t match_id) override;
  absl::StatusOr<MatchRecord> LoadMatchAfter(int64_t match_id, int after_ply) override;
  absl::StatusOr<std::vector<MatchRecord>> ListMatches(const MatchFilter& filter) override;
  absl::StatusOr<std::vector<int64_t>> MatchesToResume() override;
  absl::StatusOr<std::optional<std::pair<int64_t, int>>> FindToken(
      const std::string& token_hash) override;
  absl::StatusOr<MatchVersion> LoadVersion(int64_t match_id) override;
  absl::StatusOr<Holdings> HoldingsOf(const std::string& creator) override;
  absl::StatusOr<int> BotSeatsInPlay() override;
  absl::StatusOr<std::vector<int64_t>> ExpireWaiting(int64_t created_before_ms,
                                                     const std::string& text, int limit) override;
  absl::StatusOr<std::vector<int64_t>> AbortUnstarted(int64_t turn_started_before_ms,
                                                      int64_t now_ms, const std::string& text,
                                                      int limit) override;
  // Presence rows are per instance (origin()); see migration 8.
  absl::Status AddPresence(int64_t match_id, int seat, int delta, int64_t now_ms) override;
  absl::Status TouchPresence(const std::vector<std::pair<int64_t, int>>& seats,
                             const std::vector<SeatStreams>* open, int64_t now_ms) override;
  void PrunePresence(int limit) override;
  absl::StatusOr<std::vector<SeatPresence>> LoadPresence(const std::vector<int64_t>& match_ids,
                                                         int64_t alive_since_ms,
                                                         int64_t seen_since_ms) override;

  // Several instances: changes are announced with NOTIFY on the channel ply_matches (payload
  // "origin|id:ply:ms,..."; the rows say the rest) and heard on a connection of their own;
  // ownership is an advisory lock per match on another connection of its own.
  absl::Status StartPeers(PeerHandlers handlers) override;
  void StopPeers() override;
  absl::StatusOr<int> Peers() override;
  absl::StatusOr<bool> Own(int64_t match_id) override;
  int64_t OwnerEpoch() override { return owner_epoch_.load(); }
  void Disown(int64_t match_id) override;
  void DisownAll() override;
  absl::StatusOr<std::vector<int64_t>> ClaimOrphans(int limit) override;
  absl::Status GiveBackTurn(int64_t match_id, int ply, int64_t turn_started_ms) override;
  absl::StatusOr<bool> RecordBotRequest(int64_t match_id, int ply) override;
  absl::StatusOr<PlayerRecord> CreatePlayer(const std::string& name, const std::string& key_hash,
                                            int64_t now_ms, const RegistrationLimit& limit = {},
                                            const std::string& skeleton = "") override;
  absl::StatusOr<std::string> PlayerBySkeleton(const std::string& skeleton) override;
  absl::StatusOr<PlayerRecord> PlayerByKey(const std::string& key_hash, int64_t now_ms) override;
  absl::StatusOr<PlayerRecord> LoadPlayer(const std::string& name) override;
  absl::StatusOr<int64_t> BotPlayer(const std::string& level) override;
  absl::StatusOr<std::vector<MatchRecord>> PlayerMatches(int64_t player_id, const std::string& game,
                                                         int64_t before_id, int limit) override;
  absl::StatusOr<AnalysisClaim> ClaimAnalysis(int64_t match_id, const std::string& holder,
                                              int64_t lease_ms) override;
  absl::Status RenewAnalysis(int64_t match_id, const std::string& holder) override;
  absl::Status StoreAnalysis(int64_t match_id, const std::string& holder,
                             const std::string& result) override;
  void ReleaseAnalysis(int64_t match_id, const std::string& holder) override;
  absl::StatusOr<std::optional<std::string>> LoadAnalysis(int64_t match_id) override;
  absl::StatusOr<std::vector<LeaderboardRow>> Leaderboard(const std::string& game,
                                                          int limit) override;
  absl::StatusOr<int64_t> JoinQueue(const QueueEntry& entry, int64_t alive_since_ms) override;
  void LeaveQueue(int64_t entry_id) override;
  absl::StatusOr<std::vector<int64_t>> NoShows(int64_t player_id, int64_t since_ms) override;
  absl::StatusOr<std::optional<int64_t>> AwaitingFirstMove(int64_t player_id) override;
  absl::Status MarkNoShows(int64_t match_id, const std::vector<int>& seats,
                           int64_t now_ms) override;
  absl::StatusOr<std::optional<Pairing>> QueueResult(int64_t entry_id, int64_t refresh_ms) override;
  absl::StatusOr<std::optional<Pairing>> TryPair(
      const QueueEntry& entry, int64_t now_ms, int64_t alive_since_ms, double base_gap,
      double gap_per_s, double max_gap,
      const std::function<absl::StatusOr<PairedMatch>(const QueueEntry&, const QueueEntry&)>& make)
      override;
  absl::StatusOr<std::vector<std::pair<std::string, double>>> BotRatings(
      const std::string& game) override;
  absl::StatusOr<RematchState> OfferRematch(const RematchOffer& offer) override;
  absl::StatusOr<RematchState> WithdrawRematch(int64_t match_id) override;
  absl::Status SeedBotRatings(const std::vector<BotLevelRating>& seeds) override;
  absl::StatusOr<std::vector<BotLevelRating>> BotLevelRatings() override;

  // This instance's name in announcements.
  const std::string& origin() const { return origin_; }
  PeerCounters peer_counters() const override {
    return {notifications_.load(), listen_reconnects_.load(), db_errors_.load(),
            settled_moves_.load()};
  }

 private:
  // A libpqxx connection (defined in internal.h: only storage/postgres/ includes libpqxx).
  struct Connection;
  class Lease;
  // Runs `work` on a pooled connection, turning libpqxx exceptions into statuses.
  absl::Status WithConnection(const std::function<absl::Status(Connection&)>& work);
  // The same for work that answers a value: `work` returns absl::StatusOr<T> (defined in
  // internal.h).
  template <typename T, typename Work>
  absl::StatusOr<T> WithConnection(Work work);
  // Reads of one prepared statement outside a transaction (defined in internal.h, as they
  // need libpqxx). `parse` turns a row into a T, within WithConnection's error handling.
  // The first row, or nullopt when there is none.
  template <typename T, typename Parse, typename... Args>
  absl::StatusOr<std::optional<T>> QueryFirst(const std::string& statement, Parse parse,
                                              const Args&... args);
  // The first row; `none()` (an error) when there is none. A callable, so that a read that
  // finds its row builds no error (a status with a message is an allocation).
  template <typename T, typename None, typename Parse, typename... Args>
  absl::StatusOr<T> QueryOne(const std::string& statement, None none, Parse parse,
                             const Args&... args);
  // Every row, in order.
  template <typename T, typename Parse, typename... Args>
  absl::StatusOr<std::vector<T>> QueryAll(const std::string& statement, Parse parse,
                                          const Args&... args);
  // A new connection with every statement prepared; `application_name` names it to the server.
  std::unique_ptr<Connection> Connect(const std::string& application_name = "");

  struct PendingAppend {
    int64_t match_id;
    MoveCommit commit;
    std::function<void(absl::Status)> done;
  };
  // A writer thread: takes queued moves in batches until the store closes.
  void WriteAppends();
  // Commits a batch (moves of distinct matches); one status per move.
  std::vector<absl::Status> AppendBatch(const std::vector<PendingAppend>& batch);
  absl::Status AppendOne(int64_t match_id, const MoveCommit& commit);
  // Resolves a move whose append answered UNAVAILABLE (`failure`): reads back what the
  // database holds at its ply (stored: OK; another move there: ABORTED; not stored: append
  // again), until `deadline`.
  absl::Status Settle(int64_t match_id, const MoveCommit& commit, absl::Status failure,
                      absl::Time deadline);

  const PostgresOptions options_;
  std::string conninfo_;
  std::mutex mu_;
  std::condition_variable released_;
  std::vector<std::unique_ptr<Connection>> idle_;
  int open_ = 0;
  int max_open_ = 0;

  std::mutex append_mu_;
  std::condition_variable append_ready_;
  std::deque<PendingAppend> appends_;
  // Matches with a move being committed.
  absl::flat_hash_set<int64_t> in_flight_;
  bool closing_ = false;
  std::atomic<int64_t> appended_moves_{0};
  std::atomic<int64_t> append_batches_{0};
  std::atomic<int64_t> settled_moves_{0};
  std::vector<std::thread> writers_;

  // Announces changes to the other instances (best effort: a lost announcement is made up for
  // by their resync).
  void Announce(const std::vector<MatchChange>& changes);
  void Announce(const std::string& what);
  // The listener thread: LISTEN, hand notifications to the handlers, reconnect when it breaks.
  void Listen(std::promise<absl::Status>* first);
  // One notification's payload.
  void Heard(const std::string& payload);
  // Runs `call` on the handlers unless StopPeers came first.
  void Tell(const std::function<void(const PeerHandlers&)>& call);
  // Runs `work` on the owner connection (connecting first); a broken one loses every ownership.
  absl::Status WithOwner(const std::function<absl::Status(Connection&)>& work);

  const std::string origin_;
  // Held while a handler runs, so that StopPeers can wait for it.
  std::mutex handlers_mu_;
  PeerHandlers handlers_;
  std::atomic<bool> listening_{false};
  std::thread listener_;
  std::atomic<int> listener_pid_{0};
  std::mutex owner_mu_;
  // Matches whose lock the owner connection holds (session locks stack: one is never taken
  // twice), its epoch, and whether DisownAll closed it for good (the lobby is leaving).
  absl::flat_hash_set<int64_t> held_;
  std::atomic<int64_t> owner_epoch_{1};
  bool owner_closed_ = false;
  // Announcements that could not be sent, sent again with the next one (at most a few).
  std::mutex unsent_mu_;
  std::deque<std::string> unsent_;
  std::unique_ptr<Connection> owner_;
  int owner_pid_ = 0;
  std::string owner_started_;
  std::atomic<int64_t> notifications_{0};
  std::atomic<int64_t> listen_reconnects_{0};
  std::atomic<int64_t> db_errors_{0};
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_STORAGE_POSTGRES_POSTGRES_STORE_H_
