// QueueStore in memory, with the PostgreSQL store's semantics (storage/postgres/queue.cc) for
// unit tests of the pairing rules (players/matchmaker.h). Matches a pairing makes are numbered
// here and kept (made()) for the test to look at.
#ifndef PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_QUEUE_STORE_H_
#define PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_QUEUE_STORE_H_

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lobby-server/storage/store.h"

namespace ply::lobby {

class MemoryQueueStore : public QueueStore {
 public:
  absl::StatusOr<int64_t> JoinQueue(const QueueEntry& entry, int64_t alive_since_ms) override;
  void LeaveQueue(int64_t entry_id) override;
  absl::StatusOr<std::optional<Pairing>> QueueResult(int64_t entry_id, int64_t refresh_ms) override;
  absl::StatusOr<std::optional<Pairing>> TryPair(
      const QueueEntry& entry, int64_t now_ms, int64_t alive_since_ms, double base_gap,
      double gap_per_s, double max_gap,
      const std::function<absl::StatusOr<PairedMatch>(const QueueEntry&, const QueueEntry&)>& make)
      override;
  absl::StatusOr<std::vector<std::pair<std::string, double>>> BotRatings(
      const std::string& game) override;

  // Bot levels' ratings, by "bot:LEVEL", for BotRatings.
  void set_bot_ratings(std::vector<std::pair<std::string, double>> ratings) {
    bots_ = std::move(ratings);
  }
  // The matches pairings made, by id.
  std::map<int64_t, MatchRecord> made();
  // Entries in the queue now.
  size_t size();

 private:
  struct Row {
    QueueEntry entry;
    int64_t match_id = 0;  // 0: not paired
    int seat = 0;
  };
  std::mutex mu_;
  std::map<int64_t, Row> rows_;  // by entry id
  int64_t next_id_ = 1;
  int64_t next_match_ = 1;
  std::map<int64_t, MatchRecord> made_;
  std::vector<std::pair<std::string, double>> bots_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_QUEUE_STORE_H_
