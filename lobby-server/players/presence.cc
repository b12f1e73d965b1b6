#include "lobby-server/players/presence.h"

#include <algorithm>

namespace ply::lobby {

Presence::Presence(PresenceStore* store, Options options, std::function<int64_t()> now_ms)
    : store_(store), options_(options), now_ms_(std::move(now_ms)) {}

int64_t Presence::AliveSinceMs(int64_t now_ms) const {
  return now_ms - 3 * absl::ToInt64Milliseconds(options_.beat);
}

int64_t Presence::SeenSinceMs(int64_t now_ms) const {
  return now_ms - absl::ToInt64Milliseconds(options_.grace);
}

void Presence::Seen(int64_t match_id, int seat) {
  std::lock_guard<std::mutex> lock(mu_);
  sightings_[{match_id, seat}] = now_ms_();
}

void Presence::StreamOpened(int64_t match_id, int seat) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++open_streams_[{match_id, seat}];
  }
  (void)store_->AddPresence(match_id, seat, +1, now_ms_());
}

void Presence::StreamClosed(int64_t match_id, int seat) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_streams_.find({match_id, seat});
    if (it != open_streams_.end() && --it->second <= 0) open_streams_.erase(it);
  }
  // The stream's end is a sighting too: the seat stays present for the grace after it.
  (void)store_->AddPresence(match_id, seat, -1, now_ms_());
}

bool Presence::Write() {
  const int64_t now = now_ms_();
  std::vector<std::pair<int64_t, int>> seen;
  std::vector<int64_t> when;
  std::vector<SeatStreams> open;
  bool beat = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, ms] : sightings_) {
      seen.push_back(key);
      when.push_back(ms);
    }
    beat = now - last_beat_ms_ >= absl::ToInt64Milliseconds(options_.beat);
    // Taken under the lock with `now`: a stream opened or closed after it is written after it
    // too, and the store keeps that later write.
    if (beat) {
      for (const auto& [key, n] : open_streams_) {
        open.push_back({.match_id = key.first, .seat = key.second, .streams = n});
      }
    }
  }
  if (!beat && seen.empty()) return false;
  // One transaction for every sighting and the beat: the writes grow with the seats that
  // called, never with the events or the watchers.
  const absl::Status wrote = store_->TouchPresence(seen, beat ? &open : nullptr, now);
  if (!wrote.ok() && !absl::IsUnimplemented(wrote)) return false;
  // Finished matches' rows go every beat.
  if (beat) store_->PrunePresence(/*limit=*/1000);
  std::lock_guard<std::mutex> lock(mu_);
  if (beat) last_beat_ms_ = now;
  // Kept until written, so that a Load in between still finds them.
  for (size_t i = 0; i < seen.size(); ++i) {
    auto it = sightings_.find(seen[i]);
    if (it != sightings_.end() && it->second <= when[i]) sightings_.erase(it);
  }
  return beat;
}

absl::StatusOr<std::vector<SeatPresence>> Presence::Load(const std::vector<int64_t>& match_ids,
                                                         int64_t seen_since_ms) {
  if (match_ids.empty()) return std::vector<SeatPresence>{};
  absl::StatusOr<std::vector<SeatPresence>> found =
      store_->LoadPresence(match_ids, AliveSinceMs(now_ms_()), seen_since_ms);
  if (!found.ok()) return found;
  std::lock_guard<std::mutex> lock(mu_);
  auto mine = [&](int64_t match_id, int seat) -> SeatPresence& {
    for (SeatPresence& p : *found) {
      if (p.match_id == match_id && p.seat == seat) return p;
    }
    found->push_back({.match_id = match_id, .seat = seat});
    return found->back();
  };
  for (int64_t id : match_ids) {
    for (const auto& [key, ms] : sightings_) {
      if (key.first != id) continue;
      SeatPresence& p = mine(key.first, key.second);
      p.last_seen_ms = std::max(p.last_seen_ms, ms);
      p.connected = p.connected || ms >= seen_since_ms;
    }
    for (const auto& [key, n] : open_streams_) {
      if (key.first != id || n <= 0) continue;
      mine(key.first, key.second).connected = true;
    }
  }
  return found;
}

}  // namespace ply::lobby
