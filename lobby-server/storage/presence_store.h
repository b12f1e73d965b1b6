// Where presence is kept: per seat and lobby instance, the seat holder's open streams on that
// instance and when the seat was last seen, so that every instance judges presence alike
// (players/presence.h says the rules). PostgresStore keeps it in the `presence` table;
// MemoryPresenceStore in memory, for unit tests of the rules. A store without presence answers
// Unimplemented, and the lobby then judges by the turn's start alone.
#ifndef PLY_LOBBY_SERVER_STORAGE_PRESENCE_STORE_H_
#define PLY_LOBBY_SERVER_STORAGE_PRESENCE_STORE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ply::lobby {

// Whether a seat is held now, as every instance's streams and calls say together.
struct SeatPresence {
  int64_t match_id = 0;
  int seat = 0;
  // A stream of this seat is open (on an instance that is alive), or it was seen within the
  // grace asked for.
  bool connected = false;
  // When it was last seen (a stream open or closing, a call); 0: never.
  int64_t last_seen_ms = 0;
};

// A seat's streams open on this lobby instance.
struct SeatStreams {
  int64_t match_id = 0;
  int seat = 0;
  int streams = 0;
};

class PresenceStore {
 public:
  virtual ~PresenceStore() = default;

  // This instance's open streams of a seat change by `delta` (+1 opened, -1 closed); either
  // way the seat was seen at `now_ms`.
  virtual absl::Status AddPresence(int64_t /*match_id*/, int /*seat*/, int /*delta*/,
                                   int64_t /*now_ms*/) {
    return absl::UnimplementedError("this lobby's store keeps no presence");
  }
  // The seats were seen at `now_ms` (a call). With `open` (this instance's beat), this
  // instance's open streams are exactly those: every row of this instance is set to its count
  // (0 for a seat not listed) unless a write after `now_ms` changed it, and its open streams
  // are alive. The beat makes presence converge whatever delta was lost (a database outage as
  // a stream closed, say).
  virtual absl::Status TouchPresence(const std::vector<std::pair<int64_t, int>>& /*seats*/,
                                     const std::vector<SeatStreams>* /*open*/, int64_t /*now_ms*/) {
    return absl::UnimplementedError("this lobby's store keeps no presence");
  }
  // Forgets the presence of up to `limit` seats of finished matches (any instance may: a row
  // another is removing is skipped).
  virtual void PrunePresence(int /*limit*/) {}
  // Every seat of these matches that was ever seen: connected when a stream is open on an
  // instance that touched it since `alive_since_ms`, or when seen since `seen_since_ms`.
  virtual absl::StatusOr<std::vector<SeatPresence>> LoadPresence(
      const std::vector<int64_t>& /*match_ids*/, int64_t /*alive_since_ms*/,
      int64_t /*seen_since_ms*/) {
    return absl::UnimplementedError("this lobby's store keeps no presence");
  }
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_STORAGE_PRESENCE_STORE_H_
