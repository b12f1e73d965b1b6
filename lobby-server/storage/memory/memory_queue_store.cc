#include "lobby-server/storage/memory/memory_queue_store.h"

#include <algorithm>
#include <cmath>

namespace ply::lobby {

absl::StatusOr<int64_t> MemoryQueueStore::JoinQueue(const QueueEntry& entry,
                                                    int64_t alive_since_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = rows_.begin(); it != rows_.end(); ++it) {
    if (it->second.entry.player_id != entry.player_id) continue;
    // A player waits once: a live entry paired a moment ago stays; any other is taken over.
    if (it->second.match_id != 0 && it->second.entry.alive_ms >= alive_since_ms) {
      return absl::FailedPreconditionError(
          "you were paired a moment ago from another connection: see `ply history`");
    }
    rows_.erase(it);
    break;
  }
  const int64_t id = next_id_++;
  rows_[id].entry = entry;
  rows_[id].entry.id = id;
  rows_[id].entry.alive_ms = entry.joined_ms;
  return id;
}

void MemoryQueueStore::LeaveQueue(int64_t entry_id) {
  std::lock_guard<std::mutex> lock(mu_);
  rows_.erase(entry_id);
}

absl::StatusOr<std::optional<Pairing>> MemoryQueueStore::QueueResult(int64_t entry_id,
                                                                     int64_t refresh_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rows_.find(entry_id);
  if (it == rows_.end()) {
    return absl::AbortedError("this player queued again from another connection");
  }
  if (refresh_ms > 0) it->second.entry.alive_ms = std::max(it->second.entry.alive_ms, refresh_ms);
  if (it->second.match_id == 0) return std::optional<Pairing>();
  return std::optional<Pairing>(Pairing{.match_id = it->second.match_id, .seat = it->second.seat});
}

absl::StatusOr<std::optional<Pairing>> MemoryQueueStore::TryPair(
    const QueueEntry& me, int64_t now_ms, int64_t alive_since_ms, double base_gap, double gap_per_s,
    double max_gap,
    const std::function<absl::StatusOr<PairedMatch>(const QueueEntry&, const QueueEntry&)>& make) {
  std::lock_guard<std::mutex> lock(mu_);
  auto mine = rows_.find(me.id);
  if (mine == rows_.end() || mine->second.match_id != 0) return std::optional<Pairing>();
  // The pool's dead entries leave it.
  for (auto it = rows_.begin(); it != rows_.end();) {
    const QueueEntry& e = it->second.entry;
    if (e.pool == me.pool && e.id != me.id && e.alive_ms < alive_since_ms) {
      it = rows_.erase(it);
    } else {
      ++it;
    }
  }
  const Row* best = nullptr;
  for (const auto& [id, row] : rows_) {
    const QueueEntry& e = row.entry;
    if (id == me.id || e.pool != me.pool || row.match_id != 0) continue;
    const double waited_s = (now_ms - std::min(e.joined_ms, me.joined_ms)) / 1000.0;
    const double gap = std::min(max_gap, base_gap + gap_per_s * waited_s);
    if (std::abs(e.rating - me.rating) > gap) continue;
    if (best == nullptr ||
        std::abs(e.rating - me.rating) < std::abs(best->entry.rating - me.rating)) {
      best = &row;
    }
  }
  if (best == nullptr) return std::optional<Pairing>();
  QueueEntry them = best->entry;
  absl::StatusOr<PairedMatch> paired = make(me, them);
  if (!paired.ok()) return paired.status();
  const int64_t match_id = next_match_++;
  made_[match_id] = paired->match;
  made_[match_id].id = match_id;
  rows_[me.id].match_id = match_id;
  rows_[me.id].seat = paired->my_seat;
  rows_[them.id].match_id = match_id;
  rows_[them.id].seat = 1 - paired->my_seat;
  return std::optional<Pairing>(Pairing{.match_id = match_id, .seat = paired->my_seat});
}

absl::StatusOr<std::vector<std::pair<std::string, double>>> MemoryQueueStore::BotRatings(
    const std::string&) {
  return bots_;
}

std::map<int64_t, MatchRecord> MemoryQueueStore::made() {
  std::lock_guard<std::mutex> lock(mu_);
  return made_;
}

size_t MemoryQueueStore::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return rows_.size();
}

}  // namespace ply::lobby
