#include "client-web/presence_hold.h"

#include <vector>

#include "absl/time/clock.h"

namespace ply::web {
namespace {

// What the stream has brought so far: the lobby took it (some event came), or refused or ended
// it (`ended`, with the lobby's error when refused).
struct Drained {
  bool taken = false;
  bool ended = false;
  absl::Status error;
};

Drained Drain(client::MatchStream& stream) {
  Drained d;
  for (client::MatchStream::Item& item : stream.Take()) {
    if (item.event) d.taken = true;
    if (item.ended) {
      d.ended = true;
      d.error = item.error;
    }
  }
  return d;
}

}  // namespace

PresenceHolds::PresenceHolds(client::LobbyClient* lobby, absl::Duration hold, size_t max_holds)
    : lobby_(lobby), hold_(hold), max_holds_(max_holds) {
  sweeper_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stopping_; })) {
      lock.unlock();
      Sweep();
      lock.lock();
    }
  });
}

PresenceHolds::~PresenceHolds() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  sweeper_.join();
  std::map<Key, Hold> holds;
  {
    std::lock_guard<std::mutex> lock(mu_);
    holds.swap(holds_);
  }
}

void PresenceHolds::Update(Hold& hold, std::vector<std::unique_ptr<client::MatchStream>>& closed) {
  if (hold.stream == nullptr) return;
  const Drained d = Drain(*hold.stream);
  hold.taken = hold.taken || d.taken;
  if (!d.ended) return;
  if (d.error.ok()) {
    hold.ended = true;
  } else {
    hold.refused = d.error;
    hold.taken = false;
  }
  closed.push_back(std::move(hold.stream));
}

size_t PresenceHolds::OpenLocked() const {
  size_t open = 0;
  for (const auto& [key, hold] : holds_) open += hold.stream != nullptr ? 1 : 0;
  return open;
}

absl::StatusOr<bool> PresenceHolds::Beat(int64_t match_id, const std::string& token) {
  const Key key{match_id, token};
  // Closed after the lock is let go: closing a stream waits for its thread.
  std::vector<std::unique_ptr<client::MatchStream>> closed;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = holds_.find(key);
  if (it != holds_.end()) {
    Hold& hold = it->second;
    Update(hold, closed);
    if (!hold.refused.ok() || hold.ended) {
      const absl::Status refused = hold.refused;
      holds_.erase(it);
      if (!refused.ok()) return refused;
      return false;  // the match is over: nothing to hold
    }
    hold.until = absl::Now() + hold_;
    return hold.taken;
  }
  // Holds the lobby refused have no stream and are not counted: they last one beat.
  if (OpenLocked() >= max_holds_) {
    return absl::ResourceExhaustedError(
        "this server keeps all the players it can just now; try again soon");
  }
  Hold& hold = holds_[key];
  hold.stream = std::make_unique<client::MatchStream>(lobby_, match_id, token);
  hold.until = absl::Now() + hold_;
  return false;
}

void PresenceHolds::Leave(int64_t match_id, const std::string& token) {
  std::unique_ptr<client::MatchStream> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = holds_.find({match_id, token});
    if (it == holds_.end()) return;
    gone = std::move(it->second.stream);
    holds_.erase(it);
  }
  // Closed outside the lock: closing a stream waits for its thread.
}

void PresenceHolds::Sweep() {
  std::vector<std::unique_ptr<client::MatchStream>> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = absl::Now();
    // A refusal stays until the page's next beat has heard it, or the hold would have lapsed;
    // past max_holds_ of them (made-up tokens beaten in a loop) the rest are forgotten, and such
    // a page's next beat asks the lobby again.
    size_t refusals = 0;
    for (auto it = holds_.begin(); it != holds_.end();) {
      Hold& hold = it->second;
      Update(hold, gone);
      const bool refused = !hold.refused.ok();
      if (refused) ++refusals;
      if (hold.ended || now > hold.until || (refused && refusals > max_holds_)) {
        if (hold.stream != nullptr) gone.push_back(std::move(hold.stream));
        it = holds_.erase(it);
      } else {
        ++it;
      }
    }
  }
  gone.clear();
}

size_t PresenceHolds::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return OpenLocked();
}

}  // namespace ply::web
