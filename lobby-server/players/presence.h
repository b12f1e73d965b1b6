// Who holds a seat now, over every lobby instance: the rules of presence, apart from what the
// lobby does with them (players/claims.cc: presence events, claims, abandonment).
//
// A seat is present while a stream carrying its token is open on a live instance, and for a
// grace after it was last seen (a stream opening or closing, a call, a Here). Each instance
// counts its open seat streams and notes the calls it serves; Write sends them to the store
// (PresenceStore: one row per seat and instance): calls as sightings, and every beat this
// instance's open streams whole, which also says the instance is alive (an instance silent for
// three beats holds no seat). A write that fails (the database is down) is tried again at the
// next one, the beat included, so presence converges whatever delta was lost meanwhile (a
// stream that closed during an outage no longer holds its seat once the database is back).
// Load reads every instance's view and adds this instance's own that the store has not had
// yet (calls since the last write, streams open here).
#ifndef PLY_LOBBY_SERVER_PLAYERS_PRESENCE_H_
#define PLY_LOBBY_SERVER_PLAYERS_PRESENCE_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lobby-server/storage/presence_store.h"

namespace ply::lobby {

class Presence {
 public:
  struct Options {
    // A seat counts as present this long after it was last seen.
    absl::Duration grace = absl::Seconds(5);
    // How often this instance writes its open streams whole (and so says it is alive).
    absl::Duration beat = absl::Seconds(10);
  };

  // Load's `seen_since_ms` where only an open stream makes a seat connected (a claim's view: a
  // call is when the side was last seen, and the claim's bound runs from it).
  static constexpr int64_t kStreamsOnly = std::numeric_limits<int64_t>::max();

  // `now_ms`: the lobby's clock (ms since the Unix epoch).
  Presence(PresenceStore* store, Options options, std::function<int64_t()> now_ms);

  // A seat holder called (a move, an offer, a Here): seen now.
  void Seen(int64_t match_id, int seat);
  // A stream carrying the seat's token opened here: counted, and written at once.
  void StreamOpened(int64_t match_id, int seat);
  // That stream closed: counted, and written (the call waits for the store: run it off the
  // gRPC thread). Should the write fail, the next beat says the stream is closed.
  void StreamClosed(int64_t match_id, int seat);
  // One tick's writes: the sightings since the last write and, when a beat is due (or the last
  // one failed), this instance's open streams whole. Whether a beat was written.
  bool Write();
  // Every seen seat of these matches: connected when a stream is open on a live instance or it
  // was seen since `seen_since_ms` (kStreamsOnly: never, so only a stream counts), this
  // instance's unwritten calls and open streams included.
  // Unimplemented when the store keeps no presence; the store's error when it failed.
  absl::StatusOr<std::vector<SeatPresence>> Load(const std::vector<int64_t>& match_ids,
                                                 int64_t seen_since_ms);
  // The start of the grace: seats seen since then are present.
  int64_t SeenSinceMs(int64_t now_ms) const;

 private:
  // Streams of instances that have beaten since then count.
  int64_t AliveSinceMs(int64_t now_ms) const;

  PresenceStore* store_;
  const Options options_;
  const std::function<int64_t()> now_ms_;
  std::mutex mu_;
  // Seats seen in calls here since the last write, with when.
  absl::flat_hash_map<std::pair<int64_t, int>, int64_t> sightings_;
  // Seat holders' streams open here, per seat: what each beat writes whole.
  absl::flat_hash_map<std::pair<int64_t, int>, int> open_streams_;
  int64_t last_beat_ms_ = 0;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_PLAYERS_PRESENCE_H_
