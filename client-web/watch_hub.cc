#include "client-web/watch_hub.h"

#include <poll.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client-web/http_reply.h"

namespace ply::web {
namespace {

using nlohmann::json;

// Events kept for readers that are a little behind; one further behind gets a new snapshot.
constexpr size_t kRecentEvents = 256;

std::string SseEvent(const char* name, int64_t id, const json& data) {
  return absl::StrCat("id: ", id, "\nevent: ", name, "\ndata: ", JsonText(data), "\n\n");
}

}  // namespace

MatchFeed::MatchFeed(client::LobbyClient* lobby, int64_t match_id)
    : match_id_(match_id), idle_since_(absl::Now()) {
  stream_ = std::make_unique<client::MatchStream>(lobby, match_id);
  thread_ = std::thread([this] { Run(); });
}

MatchFeed::~MatchFeed() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  thread_.join();
  // The stream's destructor cancels the lobby call.
  stream_.reset();
}

void MatchFeed::Run() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || ended_) return;
    }
    pollfd p{.fd = stream_->wake_fd(), .events = POLLIN};
    if (poll(&p, 1, 200) <= 0) continue;
    for (client::MatchStream::Item& item : stream_->Take()) {
      if (item.event) Apply(*item.event);
      if (item.ended) {
        std::lock_guard<std::mutex> lock(mu_);
        ended_ = true;
        error_ = item.error;
        changed_.notify_all();
        return;
      }
    }
  }
}

json MatchFeed::State() const {
  v1::Match match = view_.match();
  const absl::Time now = absl::Now();
  for (int i = 0; i < match.seats_size(); ++i) {
    match.mutable_seats(i)->set_clock_ms(view_.ClockMs(i, now));
  }
  std::vector<std::string> legal;
  if (view_.active()) legal = view_.game().LegalMoves();
  return StateJson(match, legal);
}

std::string MatchFeed::SnapshotEvent(Reader reader) const {
  json data = MatchJson(view_.match(), reader);
  json state = State();
  for (auto& [k, v] : state.items()) data[k] = v;
  return SseEvent("snapshot", view_.plies(), data);
}

void MatchFeed::Append(std::string spectator, std::string player) {
  recent_.push_back(
      {.seq = ++seq_, .spectator = std::move(spectator), .player = std::move(player)});
  while (recent_.size() > kRecentEvents) recent_.pop_front();
  changed_.notify_all();
}

void MatchFeed::Apply(const v1::MatchEvent& event) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool had = loaded_;
  const int before = view_.plies();
  if (absl::Status s = view_.Apply(event, absl::Now()); !s.ok()) {
    // The stream resumes from its last move after a gap; the next snapshot repairs the view.
    return;
  }
  if (event.has_snapshot()) {
    loaded_ = true;
    // Readers before the first snapshot catch up from the view; later ones (the stream
    // started over) need the whole match again.
    if (had) Append(SnapshotEvent(Reader::kSpectator), SnapshotEvent(Reader::kPlayer));
    changed_.notify_all();
    return;
  }
  if (event.has_move_applied() && view_.plies() > before) {
    const v1::MoveRecord& move = view_.match().moves(view_.plies() - 1);
    json state = State();
    const bool player_sees = ShowsThinking(view_.match(), Reader::kPlayer);
    Append(SseEvent("move", move.ply(), {{"move", MoveJson(move, true)}, {"state", state}}),
           SseEvent("move", move.ply(), {{"move", MoveJson(move, player_sees)}, {"state", state}}));
    return;
  }
  if (event.has_draw_declined()) {
    std::string state = SseEvent("state", view_.plies(), State());
    Append(state, state);
    const json note = {{"seat", event.draw_declined().seat()}, {"message", view_.draw_answer()}};
    std::string text = SseEvent("notice", view_.plies(), note);
    Append(text, text);
    return;
  }
  if (event.has_bot_trouble()) {
    const json note = {{"seat", event.bot_trouble().seat()},
                       {"message", event.bot_trouble().message()}};
    std::string text = SseEvent("notice", view_.plies(), note);
    Append(text, text);
    return;
  }
  std::string text = SseEvent("state", view_.plies(), State());
  Append(text, text);
}

absl::Status MatchFeed::WaitLoaded(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [this] { return loaded_ || ended_; });
  if (loaded_) return absl::OkStatus();
  if (!error_.ok()) return error_;
  return absl::DeadlineExceededError("the lobby did not send the match in time");
}

bool MatchFeed::Next(Cursor& cursor, absl::Duration timeout, std::string& out) {
  std::unique_lock<std::mutex> lock(mu_);
  auto news = [&] { return ended_ || (loaded_ && (!cursor.caught_up || seq_ > cursor.seq)); };
  changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), news);
  if (!loaded_) {
    if (!ended_) return true;
    out += SseEvent("failure", 0, {{"error", error_.message()}});
    return false;
  }
  const bool player = cursor.reader == Reader::kPlayer;
  if (!cursor.caught_up) {
    cursor.caught_up = true;
    const int plies = view_.plies();
    if (!cursor.after_ply || *cursor.after_ply > plies) {
      out += SnapshotEvent(cursor.reader);
    } else {
      const bool thinking = ShowsThinking(view_.match(), cursor.reader);
      for (int i = *cursor.after_ply; i < plies; ++i) {
        const v1::MoveRecord& m = view_.match().moves(i);
        out += SseEvent("move", m.ply(), {{"move", MoveJson(m, thinking)}});
      }
      out += SseEvent("state", plies, State());
    }
    cursor.seq = seq_;
  } else if (seq_ == cursor.seq) {
    // Nothing new: the caller writes a keep-alive.
  } else if (recent_.empty() || recent_.front().seq > cursor.seq + 1) {
    // Too far behind for the events kept: the whole match again.
    out += SnapshotEvent(cursor.reader);
    cursor.seq = seq_;
  } else {
    for (const Entry& e : recent_) {
      if (e.seq <= cursor.seq) continue;
      out += player ? e.player : e.spectator;
      cursor.seq = e.seq;
    }
  }
  if (ended_ && cursor.seq == seq_) {
    out += SseEvent("end", view_.plies(), json::object());
    return false;
  }
  return true;
}

bool MatchFeed::failed() {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_ && !error_.ok();
}

absl::Time MatchFeed::idle_since() {
  std::lock_guard<std::mutex> lock(mu_);
  // Read now: never idle long enough to be dropped.
  return readers_ > 0 ? absl::InfiniteFuture() : idle_since_;
}

void MatchFeed::AddReader() {
  std::lock_guard<std::mutex> lock(mu_);
  ++readers_;
}

void MatchFeed::DropReader() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--readers_ == 0) idle_since_ = absl::Now();
}

WatchHub::WatchHub(client::LobbyClient* lobby, absl::Duration linger, size_t max_feeds)
    : lobby_(lobby), linger_(linger), max_feeds_(max_feeds) {
  sweeper_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_cv_.wait_for(lock, std::chrono::seconds(5), [this] { return stopping_; })) {
      lock.unlock();
      Sweep(/*keep=*/0);
      lock.lock();
    }
  });
}

WatchHub::~WatchHub() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  sweeper_.join();
}

void WatchHub::Sweep(int64_t keep) {
  std::vector<std::shared_ptr<MatchFeed>> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = absl::Now();
    for (auto it = feeds_.begin(); it != feeds_.end();) {
      if (it->first != keep && now - it->second->idle_since() > linger_) {
        gone.push_back(std::move(it->second));
        it = feeds_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Stopped outside the lock: stopping a feed waits for its thread.
  gone.clear();
}

std::shared_ptr<MatchFeed> WatchHub::Feed(int64_t match_id) {
  Sweep(match_id);
  std::vector<std::shared_ptr<MatchFeed>> gone;  // stopped after the lock, as in Sweep
  std::shared_ptr<MatchFeed> feed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (max_feeds_ > 0 && feeds_.count(match_id) == 0 && feeds_.size() >= max_feeds_) {
      // Room for a new one: the unread feeds go, longest idle first, until there is.
      std::vector<std::pair<absl::Time, int64_t>> unread;
      for (const auto& [id, f] : feeds_) {
        const absl::Time since = f->idle_since();
        if (since != absl::InfiniteFuture()) unread.emplace_back(since, id);
      }
      std::sort(unread.begin(), unread.end());
      for (const auto& [since, id] : unread) {
        if (feeds_.size() < max_feeds_) break;
        auto it = feeds_.find(id);
        gone.push_back(std::move(it->second));
        feeds_.erase(it);
      }
      if (feeds_.size() >= max_feeds_) return nullptr;
    }
    std::shared_ptr<MatchFeed>& slot = feeds_[match_id];
    // A feed that could not reach the lobby is not kept for the next reader.
    if (slot == nullptr || slot->failed()) slot = std::make_shared<MatchFeed>(lobby_, match_id);
    feed = slot;
  }
  gone.clear();
  return feed;
}

size_t WatchHub::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return feeds_.size();
}

}  // namespace ply::web
