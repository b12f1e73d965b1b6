// The matches this instance holds in memory, and which of them it drives. Memory is a cache of
// the database: a match is loaded when first named, reloaded when it may be behind (a write
// failed or raced, or another instance announced a change), and forgotten when the cache is
// full and it is finished and unwatched. The cache also holds this instance's share of the
// timed work (MatchStore::Own): it claims the matches nobody drives and lets go of those it
// can no longer drive. What a reload or a claim means for a match (events, timers, bots) is
// the lobby's business, told through Hooks.
#ifndef PLY_LOBBY_SERVER_MATCH_CACHE_H_
#define PLY_LOBBY_SERVER_MATCH_CACHE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "lobby-server/executor.h"
#include "lobby-server/match/clock.h"
#include "lobby-server/match/live_match.h"
#include "lobby-server/metrics.h"
#include "lobby-server/storage/store.h"

namespace ply::lobby {

struct CacheOptions {
  // Matches kept beyond the live ones (finished matches with no watcher are evicted).
  size_t size = 2000;
  // How often ownerless matches are looked for, and how many are taken at a time.
  absl::Duration claim_interval = absl::Milliseconds(500);
  int claim_batch = 64;
};

class MatchCache {
 public:
  struct Hooks {
    // A (re)load replaced `live`'s copy; `before` is what it showed (not loaded, the first
    // time). Runs with the match's lock held.
    std::function<void(LiveMatch&, PastCopy before)> reloaded;
    // This instance has just claimed `live` (lock held): re-arm its timed work.
    std::function<void(LiveMatch&)> claimed;
  };

  // How much With trusts a cached copy: as it is (writes are checked by the database), after
  // comparing its version with the database's when other instances may have changed it, or
  // not at all.
  enum class Fresh { kCached, kChecked, kReload };

  // `stopping` is the lobby's: once set, nothing is claimed or owned any more.
  MatchCache(MatchStore* store, Executor* executor, LobbyMetrics* metrics, CacheOptions options,
             NowMsFn now_ms, const std::atomic<bool>* stopping, Hooks hooks);

  // Joins the other instances and claims every ownerless match, then keeps claiming them.
  absl::Status Start();
  // Whether other lobby instances share the database, as far as this one knows.
  bool HasPeers() const { return Peers() > 0; }
  int Peers() const { return peers_.load(std::memory_order_relaxed); }

  // Runs `fn` on match `id` with its lock held, loading (or reloading a stale copy) first.
  // When `fn` loses a race to another writer (ABORTED: the cache was behind), or is refused by
  // the match's state while other instances may have moved it on, the match is reloaded and
  // `fn` runs once more on the fresh copy; `fn` must write nothing before such an answer.
  absl::Status With(int64_t id, const std::function<absl::Status(LiveMatch&)>& fn,
                    Fresh fresh = Fresh::kCached);
  // The match in memory, if any (not loaded, not locked).
  std::shared_ptr<LiveMatch> Find(int64_t id);
  // A match just created, as written: its first use needs no load. A copy someone loaded
  // meanwhile is kept (it is as good).
  void Add(std::shared_ptr<LiveMatch> live);
  // Every match in memory now (not locked).
  std::vector<std::shared_ptr<LiveMatch>> All();
  size_t size();

  // Takes ownership of an active match with timed work if nobody has it (lock held).
  void TryOwn(LiveMatch& live);
  // Hands back a match this instance owns (lock held).
  void Disown(LiveMatch& live);
  // Leaves the other instances (shutting down): their news is no longer heard (the store's
  // threads must not reach a cache or an executor that is going away), and every match this
  // instance drives is handed back at once. Bot calls end first, so that the next owner's
  // request for the same ply is the only one.
  void Leave();

 private:
  // Loads the match into `live`, telling hooks_.reloaded what it replaced.
  absl::Status Reload(LiveMatch& live);
  // With map_mu_ held: when at the bound, forgets the finished matches nobody uses or watches.
  void MakeRoomLocked();
  // Other instances' changes (on the executor): matches behind are marked, and reloaded now
  // when watched or owned here.
  void OnPeerChanges(const std::vector<MatchChange>& changes);
  // Every cached match may be behind (announcements were lost).
  void ResyncAll();
  // The store lost this instance's ownerships: stop driving every match.
  void OwnershipLost();
  // Claims up to claim_batch ownerless matches; returns how many it took.
  int ClaimOrphans();
  // ClaimOrphans and a look at the peers, every claim_interval.
  void ClaimTick();
  // Marks `live` stale; returns whether it should be reloaded now (watched or driven here).
  static bool MarkBehind(LiveMatch& live);

  MatchStore* store_;
  Executor* executor_;
  LobbyMetrics* metrics_;
  const CacheOptions options_;
  const NowMsFn now_ms_;
  const std::atomic<bool>* stopping_;
  const Hooks hooks_;
  std::atomic<int> peers_{0};

  std::mutex map_mu_;
  std::map<int64_t, std::shared_ptr<LiveMatch>> matches_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_MATCH_CACHE_H_
