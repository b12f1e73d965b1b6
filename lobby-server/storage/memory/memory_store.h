// A MatchStore kept in memory, for tests of the match logic that need neither PostgreSQL nor
// waiting. It keeps PostgresStore's promises (storage/store.h): every write is conditional on
// the match's status and ply exactly as the SQL is, and answers NOT_FOUND, ALREADY_EXISTS and
// ABORTED in the same cases; it does not batch commits, announce changes to other instances or
// share ownership (one lobby owns every match). A test may make the writes fail, as a database
// that went away would, and may write through it behind the lobby's back, as another instance
// would. With `async_appends`, AppendMoveAsync answers on a writer thread of its own, as
// PostgresStore's writers do, so that the lobby's hand-off of a move in flight is exercised.
#ifndef PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_STORE_H_
#define PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_STORE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lobby-server/storage/store.h"

namespace ply::lobby {

class MemoryStore final : public MatchStore {
 public:
  explicit MemoryStore(bool async_appends = false);
  // Answers the appends still queued first.
  ~MemoryStore() override;
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

  // There is no schema to bring up to date.
  absl::Status Migrate() override { return absl::OkStatus(); }
  absl::StatusOr<int64_t> CreateMatch(const MatchRecord& match) override;
  absl::StatusOr<bool> TakeSeat(int64_t match_id, int seat, const std::string& name,
                                const std::string& token_hash, int64_t now_ms,
                                int64_t player_id = 0, SeatRecord* taken = nullptr) override;
  absl::Status AppendMove(int64_t match_id, const MoveCommit& commit) override;
  void AppendMoveAsync(int64_t match_id, MoveCommit commit,
                       std::function<void(absl::Status)> done) override;
  absl::Status Finish(int64_t match_id, const FinishCommit& commit) override;
  absl::Status SetDrawOffer(int64_t match_id, int expected_ply, int seat) override;
  absl::StatusOr<MatchRecord> LoadMatch(int64_t match_id) override;
  absl::StatusOr<std::vector<MatchRecord>> ListMatches(const MatchFilter& filter) override;
  absl::StatusOr<std::vector<int64_t>> MatchesToResume() override;
  absl::StatusOr<std::optional<std::pair<int64_t, int>>> FindToken(
      const std::string& token_hash) override;
  absl::StatusOr<MatchVersion> LoadVersion(int64_t match_id) override;
  absl::StatusOr<Holdings> HoldingsOf(const std::string& creator) override;
  absl::StatusOr<int64_t> CreateMatchWithin(const MatchRecord& match,
                                            const QuotaCheck& check) override;
  absl::StatusOr<int> BotSeatsInPlay() override;
  absl::StatusOr<std::vector<int64_t>> AbortUnstarted(int64_t turn_started_before_ms,
                                                      int64_t now_ms, const std::string& text,
                                                      int limit) override;
  absl::StatusOr<std::vector<int64_t>> ExpireWaiting(int64_t created_before_ms,
                                                     const std::string& text, int limit) override;
  absl::StatusOr<RematchState> OfferRematch(const RematchOffer& offer) override;
  absl::StatusOr<RematchState> WithdrawRematch(int64_t match_id) override;

  // Every call fails with `status` (UNAVAILABLE, say) until it is OK again; nothing is written.
  void FailCalls(absl::Status status);
  // Calls made so far (loads and writes), to tell whether the lobby answered from memory.
  int64_t calls() const;

 private:
  // What `key` holds: a creator, or with `address` a creator's address (mu_ held).
  Holdings HoldingsLocked(const std::string& key, bool address) const;
  // `check` on what match's creator and its address hold (mu_ held).
  absl::Status CheckQuotaLocked(const MatchRecord& match, const QuotaCheck& check) const;
  // Counts the call; the injected failure, if any.
  absl::Status Enter();
  // The match, or NOT_FOUND (mu_ held).
  absl::StatusOr<MatchRecord*> FindLocked(int64_t match_id);

  // The writer thread's loop (async_appends).
  void WriteAppends();

  mutable std::mutex mu_;
  absl::Status failure_;
  int64_t calls_ = 0;
  int64_t next_id_ = 1;
  std::map<int64_t, MatchRecord> matches_;
  // The token hash in the rematch of each open rematch offer, by match.
  std::map<int64_t, std::string> offer_hashes_;

  struct PendingAppend {
    int64_t match_id;
    MoveCommit commit;
    std::function<void(absl::Status)> done;
  };
  std::mutex append_mu_;
  std::condition_variable append_ready_;
  std::deque<PendingAppend> appends_;
  bool closing_ = false;
  std::thread writer_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_STORE_H_
