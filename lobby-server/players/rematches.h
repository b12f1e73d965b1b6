// Rematches: the rules, apart from the call that offers one (players/rematch.cc, the Lobby's
// part). After a finished match (not one cancelled before it began) either player of its two
// seats may offer a rematch: the same game, options, time control, pacing and rated or casual,
// the seats swapped. When the other player offered too, or is a bot (which accepts at once),
// the store makes it, within its creator's quotas as a new match would be (the rematch keeps
// the old match's creator and address). A seat makes a few rematch calls at once and one every
// two seconds after, so that a loop of offers and withdrawals (each a write and a notification
// to every instance) is cut off.
#ifndef PLY_LOBBY_SERVER_PLAYERS_REMATCHES_H_
#define PLY_LOBBY_SERVER_PLAYERS_REMATCHES_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "lobby-server/players/quotas.h"
#include "lobby-server/storage/store.h"

namespace ply::lobby {

class Rematches {
 public:
  static constexpr double kBurst = 6;
  static constexpr int64_t kEveryMs = 2000;

  Rematches(RematchStore* store, const Quotas* quotas, std::function<int64_t()> now_ms);

  // Whether `seat` of the finished match may make a rematch call now (RESOURCE_EXHAUSTED).
  absl::Status Admit(int64_t match_id, int seat);
  // Why `old` can have no rematch (FAILED_PRECONDITION), if it cannot.
  static absl::Status CheckRematchable(const MatchRecord& old);
  // The rematch `seat` offers (or accepts) with its token hash in the new match: the match as
  // it would be made, and the quotas it is made within.
  RematchOffer OfferOf(const MatchRecord& old, int seat, std::string token_hash) const;
  // Records the offer, or makes the rematch when both agreed (RematchStore::OfferRematch).
  absl::StatusOr<RematchState> Offer(const RematchOffer& offer);
  // Withdraws or declines the open offer.
  absl::StatusOr<RematchState> Withdraw(int64_t match_id);

 private:
  struct Bucket {
    double tokens = 0;
    int64_t refilled_ms = 0;
  };
  RematchStore* store_;
  const Quotas* quotas_;
  const std::function<int64_t()> now_ms_;
  std::mutex mu_;
  absl::flat_hash_map<std::pair<int64_t, int>, Bucket> calls_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_PLAYERS_REMATCHES_H_
