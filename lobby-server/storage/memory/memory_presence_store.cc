#include "lobby-server/storage/memory/memory_presence_store.h"

#include <algorithm>
#include <set>

namespace ply::lobby {
namespace {

absl::Status Down() { return absl::UnavailableError("the presence store is down"); }

}  // namespace

absl::Status MemoryPresenceStore::AddPresence(int64_t match_id, int seat, int delta,
                                              int64_t now_ms) {
  if (down_) return Down();
  std::lock_guard<std::mutex> lock(rows_->mu);
  Rows::Row& row = rows_->rows[{match_id, seat, instance_}];
  row.streams = std::max(row.streams + delta, 0);
  row.seen_ms = std::max(row.seen_ms, now_ms);
  return absl::OkStatus();
}

absl::Status MemoryPresenceStore::TouchPresence(const std::vector<std::pair<int64_t, int>>& seats,
                                                const std::vector<SeatStreams>* open,
                                                int64_t now_ms) {
  if (down_) return Down();
  std::lock_guard<std::mutex> lock(rows_->mu);
  for (const auto& [match_id, seat] : seats) {
    Rows::Row& row = rows_->rows[{match_id, seat, instance_}];
    row.seen_ms = std::max(row.seen_ms, now_ms);
  }
  if (open == nullptr) return absl::OkStatus();
  std::set<std::pair<int64_t, int>> listed;
  for (const SeatStreams& o : *open) {
    listed.insert({o.match_id, o.seat});
    Rows::Row& row = rows_->rows[{o.match_id, o.seat, instance_}];
    // A row written after the beat's snapshot keeps what that write said.
    if (row.seen_ms <= now_ms) row.streams = o.streams;
    row.seen_ms = std::max(row.seen_ms, now_ms);
  }
  for (auto& [key, row] : rows_->rows) {
    const auto& [match_id, seat, instance] = key;
    if (instance == instance_ && row.streams > 0 && row.seen_ms <= now_ms &&
        !listed.contains({match_id, seat})) {
      row.streams = 0;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<SeatPresence>> MemoryPresenceStore::LoadPresence(
    const std::vector<int64_t>& match_ids, int64_t alive_since_ms, int64_t seen_since_ms) {
  if (down_) return Down();
  std::lock_guard<std::mutex> lock(rows_->mu);
  std::map<std::pair<int64_t, int>, SeatPresence> seats;
  for (const auto& [key, row] : rows_->rows) {
    const auto& [match_id, seat, instance] = key;
    if (std::find(match_ids.begin(), match_ids.end(), match_id) == match_ids.end()) continue;
    SeatPresence& p = seats[{match_id, seat}];
    p.match_id = match_id;
    p.seat = seat;
    p.connected = p.connected || (row.streams > 0 && row.seen_ms >= alive_since_ms) ||
                  row.seen_ms >= seen_since_ms;
    p.last_seen_ms = std::max(p.last_seen_ms, row.seen_ms);
  }
  std::vector<SeatPresence> out;
  for (auto& [key, p] : seats) out.push_back(p);
  return out;
}

}  // namespace ply::lobby
