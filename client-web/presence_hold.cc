#include "client-web/presence_hold.h"

#include <poll.h>

#include <vector>

#include "absl/time/clock.h"

namespace ply::web {
namespace {

// What a hold's stream has told: whether the lobby is reading it now (`taken`), and whether it
// is over (`ended`, with the lobby's error when refused).
struct Drained {
  bool taken = false;
  bool ended = false;
  absl::Status error;
};

// Brings `d` up to date with what the stream has brought since, in order. An event means the
// lobby is reading the stream; a notice means its connection was lost and is being retried (the
// stream's "reconnected" notice comes just before the first event of the new connection, which
// sets `taken` again).
void Drain(client::MatchStream& stream, Drained& d) {
  for (client::MatchStream::Item& item : stream.Take()) {
    if (item.event) {
      d.taken = true;
    } else if (!item.notice.empty()) {
      d.taken = false;
    }
    if (item.ended) {
      d.ended = true;
      d.error = item.error;
    }
  }
}

// Waits up to `wait` for the new stream's first answer: an event, or its end.
Drained FirstAnswer(client::MatchStream& stream, absl::Duration wait) {
  Drained d;
  const absl::Time deadline = absl::Now() + wait;
  for (;;) {
    Drain(stream, d);
    if (d.taken || d.ended) return d;
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return d;
    pollfd wake = {.fd = stream.wake_fd(), .events = POLLIN, .revents = 0};
    (void)poll(&wake, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
  }
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
  Drained d{.taken = hold.taken};
  Drain(*hold.stream, d);
  hold.taken = d.taken;
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

absl::StatusOr<bool> PresenceHolds::BeatLocked(
    std::map<Key, Hold>::iterator it, std::vector<std::unique_ptr<client::MatchStream>>& closed) {
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

absl::StatusOr<bool> PresenceHolds::SignOfLife(int64_t match_id, const std::string& token) {
  absl::StatusOr<v1::HereResponse> here = lobby_->Here(match_id, token, kSignOfLifeWait);
  if (!here.ok()) return here.status();
  return here->active();
}

absl::StatusOr<bool> PresenceHolds::Beat(int64_t match_id, const std::string& token) {
  absl::StatusOr<bool> held = HoldStream(match_id, token);
  // A seat holder's beat is never refused for others' load: with no stream to spare here (every
  // hold taken, or the lobby's streams for this gateway), the beat reaches the lobby as a call.
  if (absl::IsResourceExhausted(held.status())) return SignOfLife(match_id, token);
  return held;
}

absl::StatusOr<bool> PresenceHolds::HoldStream(int64_t match_id, const std::string& token) {
  const Key key{match_id, token};
  // Closed after the lock is let go (declared before it): closing a stream waits for its thread.
  std::vector<std::unique_ptr<client::MatchStream>> closed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = holds_.find(key);
    if (it != holds_.end()) return BeatLocked(it, closed);
    // Holds the lobby refused have no stream and are not counted.
    if (OpenLocked() + opening_ >= max_holds_) {
      return absl::ResourceExhaustedError(
          "this server keeps all the players it can just now; try again soon");
    }
    ++opening_;
  }
  // A first beat: the stream is opened and its first answer awaited without the lock, so that
  // other pages' beats go on meanwhile; the hold is kept only once there is a stream to keep.
  std::unique_ptr<client::MatchStream> stream;
  Drained first;
  try {
    stream = std::make_unique<client::MatchStream>(lobby_, match_id, token);
    first = FirstAnswer(*stream, kFirstAnswerWait);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    --opening_;
    throw;
  }
  std::lock_guard<std::mutex> lock(mu_);
  --opening_;
  if (first.ended) {
    closed.push_back(std::move(stream));
    if (!first.error.ok()) return first.error;  // refused: this request hears it
    return false;                               // the match is over: nothing to hold
  }
  auto [it, opened] = holds_.try_emplace(key);
  if (!opened) {
    // The same page's beats crossed (a retry): the one that came first is the hold.
    closed.push_back(std::move(stream));
    return BeatLocked(it, closed);
  }
  Hold& hold = it->second;
  hold.stream = std::move(stream);
  hold.taken = first.taken;
  hold.until = absl::Now() + hold_;
  return hold.taken;
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
      // Only the refusals kept count toward the bound: those lapsing now are dropped anyway.
      bool drop = hold.ended || now > hold.until;
      if (!drop && !hold.refused.ok()) drop = ++refusals > max_holds_;
      if (drop) {
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
