// PresenceStore in memory, with the PostgreSQL store's semantics (storage/postgres/presence.cc)
// row for row, for unit tests of the presence rules (players/presence.h): several instances
// share one Rows, each writing as itself, and writes can be made to fail as in an outage.
#ifndef PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_PRESENCE_STORE_H_
#define PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_PRESENCE_STORE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lobby-server/storage/presence_store.h"

namespace ply::lobby {

class MemoryPresenceStore : public PresenceStore {
 public:
  // The presence table every instance of a test shares.
  struct Rows {
    struct Row {
      int streams = 0;
      int64_t seen_ms = 0;
    };
    std::mutex mu;
    // By (match, seat, instance).
    std::map<std::tuple<int64_t, int, std::string>, Row> rows;
  };

  MemoryPresenceStore(std::shared_ptr<Rows> rows, std::string instance)
      : rows_(std::move(rows)), instance_(std::move(instance)) {}

  // While set, every call fails with UNAVAILABLE, as with the database down.
  void set_down(bool down) { down_ = down; }

  absl::Status AddPresence(int64_t match_id, int seat, int delta, int64_t now_ms) override;
  absl::Status TouchPresence(const std::vector<std::pair<int64_t, int>>& seats,
                             const std::vector<SeatStreams>* open, int64_t now_ms) override;
  absl::StatusOr<std::vector<SeatPresence>> LoadPresence(const std::vector<int64_t>& match_ids,
                                                         int64_t alive_since_ms,
                                                         int64_t seen_since_ms) override;

 private:
  std::shared_ptr<Rows> rows_;
  const std::string instance_;
  bool down_ = false;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_STORAGE_MEMORY_MEMORY_PRESENCE_STORE_H_
