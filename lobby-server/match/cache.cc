#include "lobby-server/match/cache.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/core/random.h"
#include "engine/registry/registry.h"

namespace ply::lobby {
namespace {

// A match with work that goes on without any call: a clock that can fall, or a bot seat.
bool HasTimedWork(const MatchRecord& r) {
  if (r.time_initial_ms) return true;
  return std::any_of(r.seats.begin(), r.seats.end(),
                     [](const SeatRecord& s) { return s.kind == SeatKind::kBot; });
}

}  // namespace

MatchCache::MatchCache(MatchStore* store, Executor* executor, LobbyMetrics* metrics,
                       CacheOptions options, NowMsFn now_ms, const std::atomic<bool>* stopping,
                       Hooks hooks)
    : store_(store),
      executor_(executor),
      metrics_(metrics),
      options_(options),
      now_ms_(std::move(now_ms)),
      stopping_(stopping),
      hooks_(std::move(hooks)) {}

absl::Status MatchCache::Start() {
  // The handlers run on the store's threads, which must not wait for a match's lock (its
  // holder may be inside the store): the work goes to the executor.
  PeerHandlers handlers{
      .changed =
          [this](const std::vector<MatchChange>& changes) {
            peers_.store(std::max(1, peers_.load()), std::memory_order_relaxed);
            last_peer_ms_.store(WallClockMs(), std::memory_order_relaxed);
            if (changes.empty()) return;
            executor_->PostAt(absl::Now(), [this, changes] { OnPeerChanges(changes); });
          },
      .resync = [this] { executor_->PostAt(absl::Now(), [this] { ResyncAll(); }); },
      .released = [this] { executor_->PostAt(absl::Now(), [this] { ClaimOrphans(); }); },
      .ownership_lost =
          [this](int64_t epoch) {
            executor_->PostAt(absl::Now(), [this, epoch] { OwnershipLost(epoch); });
          },
  };
  if (absl::Status s = store_->StartPeers(std::move(handlers)); !s.ok()) return s;
  if (absl::StatusOr<int> peers = store_->Peers(); peers.ok()) NotePeers(*peers);
  // Everything ownerless now, before serving: a restarted lobby goes on where it stopped.
  while (ClaimOrphans() >= options_.claim_batch) {
  }
  executor_->PostAt(absl::Now() + options_.claim_interval, [this] { ClaimTick(); });
  return absl::OkStatus();
}

absl::Status MatchCache::With(int64_t id, const std::function<absl::Status(LiveMatch&)>& fn,
                              Fresh fresh) {
  if (id <= 0) return absl::InvalidArgumentError("a match id is a positive number");
  bool retried = false;
  bool reloaded = false;
  for (;;) {
    std::shared_ptr<LiveMatch> live;
    {
      std::lock_guard<std::mutex> lock(map_mu_);
      auto it = matches_.find(id);
      if (it == matches_.end()) {
        MakeRoomLocked();
        live = std::make_shared<LiveMatch>();
        live->id = id;
        matches_.emplace(id, live);
      } else {
        live = it->second;
      }
    }
    std::unique_lock<std::mutex> lock(live->mu);
    // A commit in flight lands within the statement timeout, unless the database link hangs.
    if (!live->settled.wait_for(lock, std::chrono::seconds(10),
                                [&] { return !live->committing; })) {
      return absl::UnavailableError(
          absl::StrCat("match ", id, " is still waiting for its last move to be stored; retry"));
    }
    // Its first load failed meanwhile and it left the map: look again.
    if (live->dropped) continue;
    if (live->loaded && !live->stale && fresh == Fresh::kReload) live->stale = true;
    if (live->loaded && !live->stale && fresh == Fresh::kChecked && HasPeers()) {
      absl::StatusOr<MatchVersion> version = store_->LoadVersion(id);
      if (!version.ok()) return version.status();
      if (!(*version == VersionOf(live->rec))) live->stale = true;
    }
    fresh = Fresh::kCached;
    reloaded = !live->loaded || live->stale;
    if (reloaded) {
      if (absl::Status s = Reload(*live); !s.ok()) {
        if (!live->loaded) {
          live->dropped = true;
          std::lock_guard<std::mutex> map_lock(map_mu_);
          auto it = matches_.find(id);
          if (it != matches_.end() && it->second == live) matches_.erase(it);
        }
        return s;
      }
    }
    absl::Status s = fn(*live);
    // Another instance wrote first (ABORTED), or may have (a refusal because of the match's
    // state, from a copy that other instances can have moved on): once more, on the database's
    // state.
    const bool maybe_behind =
        absl::IsAborted(s) || (absl::IsFailedPrecondition(s) && HasPeers() && !reloaded);
    if (maybe_behind && !retried) {
      retried = true;
      live->stale = true;
      continue;
    }
    return s;
  }
}

absl::Status MatchCache::Reload(LiveMatch& live) {
  // A copy that is a few moves behind (another instance moved the match on) reads and replays
  // only the moves it lacks; anything else is loaded and replayed whole.
  const bool behind = live.loaded && live.game != nullptr;
  absl::StatusOr<MatchRecord> rec =
      behind ? store_->LoadMatchAfter(live.id, live.rec.ply) : store_->LoadMatch(live.id);
  if (!rec.ok()) return rec.status();
  const GameInfo* info = FindGame(rec->game);
  if (info == nullptr) {
    return absl::InternalError(absl::StrCat("match ", live.id, " is of game '", rec->game,
                                            "', which this lobby does not know"));
  }
  std::unique_ptr<AnyGame> game;
  if (behind && rec->ply >= live.rec.ply &&
      static_cast<int>(rec->moves.size()) == rec->ply - live.rec.ply) {
    game = live.game->Clone();
    for (const MoveRecord& m : rec->moves) {
      // A stored move that does not follow this copy: load the match whole below.
      if (!game->Play(m.move).ok()) {
        game = nullptr;
        break;
      }
    }
    if (game != nullptr) {
      std::vector<MoveRecord> moves = live.rec.moves;
      for (MoveRecord& m : rec->moves) moves.push_back(std::move(m));
      rec->moves = std::move(moves);
    }
  }
  if (game == nullptr) {
    if (behind) rec = store_->LoadMatch(live.id);
    if (!rec.ok()) return rec.status();
    std::vector<std::string> moves;
    for (const MoveRecord& m : rec->moves) moves.push_back(m.move);
    absl::StatusOr<std::unique_ptr<AnyGame>> replayed = ReplayGame(rec->game, rec->options, moves);
    if (!replayed.ok()) {
      return absl::InternalError(
          absl::StrCat("match ", live.id, " cannot be replayed: ", replayed.status().message()));
    }
    game = *std::move(replayed);
  }
  PastCopy before;
  if (live.loaded) {
    before.loaded = true;
    before.ply = live.rec.ply;
    before.version = VersionOf(live.rec);
    for (const SeatRecord& seat : live.rec.seats) {
      before.clocks.push_back(live.rec.time_initial_ms ? seat.clock_ms : 0);
    }
    before.game = std::move(live.game);
  }
  const int old_ply = live.loaded ? live.rec.ply : -1;
  live.rec = *std::move(rec);
  live.info = info;
  live.game = std::move(game);
  live.loaded = true;
  live.stale = false;
  // A bot call out for the position the match is still at stays the only one: asking again on
  // every reload would let anyone make the bots search at will (a refused move reloads).
  if (live.bot_call != nullptr &&
      (live.rec.ply != old_ply || live.rec.status != MatchStatus::kActive)) {
    live.bot_call->Cancel();
    live.bot_call = nullptr;
  }
  if (live.bot_call == nullptr) live.bot_ply = -1;
  live.flag_ply = -1;
  hooks_.reloaded(live, std::move(before));
  return absl::OkStatus();
}

std::shared_ptr<LiveMatch> MatchCache::Find(int64_t id) {
  std::lock_guard<std::mutex> lock(map_mu_);
  auto it = matches_.find(id);
  return it == matches_.end() ? nullptr : it->second;
}

void MatchCache::Add(std::shared_ptr<LiveMatch> live) {
  std::lock_guard<std::mutex> lock(map_mu_);
  MakeRoomLocked();
  const int64_t id = live->id;
  matches_.emplace(id, std::move(live));
}

std::vector<std::shared_ptr<LiveMatch>> MatchCache::All() {
  std::vector<std::shared_ptr<LiveMatch>> lives;
  std::lock_guard<std::mutex> lock(map_mu_);
  for (auto& [id, live] : matches_) lives.push_back(live);
  return lives;
}

size_t MatchCache::size() {
  std::lock_guard<std::mutex> lock(map_mu_);
  return matches_.size();
}

void MatchCache::MakeRoomLocked() {
  if (matches_.size() < options_.size) return;
  // Whatever nobody here watches or drives may go, whether finished, waiting or in play (a
  // later call loads it again), so memory stays bounded however many matches clients open.
  // Finished and waiting matches go first; matches in play only as far as the bound needs.
  // Down to nine tenths of the bound, so that the scan is not paid at every new match.
  const size_t target = options_.size - options_.size / 10;
  for (const bool in_play : {false, true}) {
    for (auto i = matches_.begin(); i != matches_.end() && matches_.size() >= target;) {
      std::unique_lock<std::mutex> l(i->second->mu, std::try_to_lock);
      LiveMatch& m = *i->second;
      // A finished match's watchers (those waiting for a rematch) hear nothing more that would
      // tell that they left: forget the streams that are over.
      if (l.owns_lock()) {
        std::erase_if(m.watchers, [](const std::shared_ptr<EventSink>& w) { return w->Closed(); });
      }
      const bool idle = l.owns_lock() && m.loaded && m.watchers.empty() && !m.owned &&
                        !m.committing && m.bot_call == nullptr &&
                        (m.rec.status == MatchStatus::kActive) == in_play;
      // A caller that took this copy from the map before and waits for its lock must look
      // again, not use a copy nobody will update.
      if (idle) i->second->dropped = true;
      l = {};
      i = idle ? matches_.erase(i) : std::next(i);
    }
  }
}

void MatchCache::TryOwn(LiveMatch& live) {
  if (live.owned || *stopping_ || live.rec.status != MatchStatus::kActive ||
      !HasTimedWork(live.rec)) {
    return;
  }
  const int64_t epoch = store_->OwnerEpoch();
  absl::StatusOr<bool> owned = store_->Own(live.id);
  live.owned = owned.ok() && *owned;
  live.owned_epoch = epoch;
}

void MatchCache::Disown(LiveMatch& live) {
  if (!live.owned) return;
  live.owned = false;
  // Not here: this may be a database writer's thread (a move that ended the match), which must
  // not wait for the owner connection.
  executor_->PostAt(absl::Now(), [store = store_, id = live.id] { store->Disown(id); });
}

bool MatchCache::HasPeers() const {
  return Peers() > 0 || WallClockMs() - last_peer_ms_.load(std::memory_order_relaxed) < 60'000;
}

void MatchCache::NotePeers(int peers) {
  peers_ = peers;
  if (peers > 0) last_peer_ms_.store(WallClockMs(), std::memory_order_relaxed);
}

void MatchCache::Leave() {
  store_->StopPeers();
  for (auto& live : All()) {
    std::lock_guard<std::mutex> l(live->mu);
    if (live->bot_call) live->bot_call->Cancel();
    live->owned = false;
  }
  store_->DisownAll();
}

int MatchCache::ClaimOrphans() {
  if (*stopping_) return 0;
  const int64_t epoch = store_->OwnerEpoch();
  absl::StatusOr<std::vector<int64_t>> ids = store_->ClaimOrphans(options_.claim_batch);
  if (!ids.ok()) return 0;
  for (int64_t id : *ids) {
    metrics_->leases_taken.fetch_add(1, std::memory_order_relaxed);
    // Whatever is cached may be behind: the previous owner moved it on.
    absl::Status s = With(
        id,
        [&](LiveMatch& live) {
          live.owned = true;
          live.owned_epoch = epoch;
          live.flag_ply = -1;
          if (live.bot_call == nullptr) live.bot_ply = -1;
          // Finished meanwhile: the hook hands it back.
          hooks_.claimed(live);
          return absl::OkStatus();
        },
        Fresh::kReload);
    if (!s.ok()) store_->Disown(id);
  }
  return static_cast<int>(ids->size());
}

void MatchCache::ClaimTick() {
  if (*stopping_) return;
  ClaimOrphans();
  if (absl::StatusOr<int> peers = store_->Peers(); peers.ok()) NotePeers(*peers);
  // Jitter, so that instances started together do not claim in step.
  const absl::Duration next =
      options_.claim_interval *
      (0.75 + 0.5 * static_cast<double>(Mix64(WallClockMs()) % 1000) / 1000);
  executor_->PostAt(absl::Now() + next, [this] { ClaimTick(); });
}

bool MatchCache::MarkBehind(LiveMatch& live) {
  live.stale = true;
  return !live.watchers.empty() || live.owned;
}

void MatchCache::OnPeerChanges(const std::vector<MatchChange>& changes) {
  for (const MatchChange& c : changes) {
    std::shared_ptr<LiveMatch> live = Find(c.match_id);
    if (live == nullptr) continue;
    bool reload = false;
    {
      std::lock_guard<std::mutex> lock(live->mu);
      // Old news: this copy has seen that ply already and moved past it.
      if (live->loaded && c.ply < live->rec.ply) continue;
      reload = MarkBehind(*live);
    }
    if (!reload) continue;
    bool watched = false;
    (void)With(c.match_id, [&](LiveMatch& l) {
      watched = !l.watchers.empty();
      return absl::OkStatus();
    });
    if (watched) {
      metrics_->peer_event_lag_ms.Observe(static_cast<double>(now_ms_() - c.time_ms));
    }
  }
}

void MatchCache::ResyncAll() {
  metrics_->resyncs.fetch_add(1, std::memory_order_relaxed);
  for (auto& live : All()) {
    bool reload = false;
    {
      std::lock_guard<std::mutex> lock(live->mu);
      reload = MarkBehind(*live);
    }
    if (reload) (void)With(live->id, [](LiveMatch&) { return absl::OkStatus(); });
  }
}

void MatchCache::OwnershipLost(int64_t epoch) {
  for (auto& live : All()) {
    std::lock_guard<std::mutex> lock(live->mu);
    if (!live->owned || live->owned_epoch > epoch) continue;
    // Another instance may own it already: its bot request must be the only one.
    live->owned = false;
    if (live->bot_call) live->bot_call->Cancel();
    live->bot_call = nullptr;
    live->bot_ply = -1;
    live->flag_ply = -1;
  }
}

}  // namespace ply::lobby
