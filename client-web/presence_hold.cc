#include "client-web/presence_hold.h"

#include <poll.h>

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
  std::map<Key, std::shared_ptr<Hold>> holds;
  {
    std::lock_guard<std::mutex> lock(mu_);
    holds.swap(holds_);
  }
}

absl::Status PresenceHolds::Beat(int64_t match_id, const std::string& token, absl::Duration wait) {
  const Key key{match_id, token};
  std::shared_ptr<Hold> hold;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = holds_.find(key);
    if (it != holds_.end()) {
      it->second->until = absl::Now() + hold_;
      return absl::OkStatus();
    }
    if (holds_.size() >= max_holds_) {
      return absl::ResourceExhaustedError(
          "this server keeps all the players it can just now; try again soon");
    }
    hold = std::make_shared<Hold>();
    hold->stream = std::make_unique<client::MatchStream>(lobby_, match_id, token);
    hold->until = absl::Now() + hold_;
  }
  // Until the lobby has answered, the hold is not shared: a second beat meanwhile opens its own
  // (and the later one to finish replaces it), which is rare and harmless.
  const absl::Time deadline = absl::Now() + wait;
  Drained d;
  while (!d.taken && !d.ended) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    pollfd p{.fd = hold->stream->wake_fd(), .events = POLLIN};
    poll(&p, 1, static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 200)));
    const Drained now = Drain(*hold->stream);
    d.taken = d.taken || now.taken;
    if (now.ended) {
      d.ended = true;
      d.error = now.error;
    }
  }
  if (d.ended && !d.error.ok()) return d.error;
  // A stream still unanswered is kept: the lobby may be slow, and the sweep drops it if it is
  // refused later.
  if (d.ended) return absl::OkStatus();  // the match is over: nothing to hold
  std::shared_ptr<Hold> replaced;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<Hold>& slot = holds_[key];
    replaced = std::move(slot);
    slot = std::move(hold);
  }
  return absl::OkStatus();
}

void PresenceHolds::Leave(int64_t match_id, const std::string& token) {
  std::shared_ptr<Hold> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = holds_.find({match_id, token});
    if (it == holds_.end()) return;
    gone = std::move(it->second);
    holds_.erase(it);
  }
  // Closed outside the lock: closing a stream waits for its thread.
}

void PresenceHolds::Sweep() {
  std::vector<std::shared_ptr<Hold>> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = absl::Now();
    for (auto it = holds_.begin(); it != holds_.end();) {
      const Drained d = Drain(*it->second->stream);
      if (d.ended || now > it->second->until) {
        gone.push_back(std::move(it->second));
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
  return holds_.size();
}

}  // namespace ply::web
