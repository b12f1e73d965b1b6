// Rematches, the Lobby's part: a player of a finished match offers one (or accepts the other's,
// by offering too), withdraws or declines (the rules are Rematches': players/rematches.h); the
// store decides in one transaction whether this offer makes the rematch, so that offers at once
// make one. Each player's seat in the rematch
// has a token derived from their seat token in the old match (token.h, RematchToken): either
// player gets it by asking again with the old token, and the database keeps only its hash.
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lobby-server/convert.h"
#include "lobby-server/events/fanout.h"
#include "lobby-server/lobby.h"
#include "lobby-server/token.h"

namespace ply::lobby {

absl::StatusOr<v1::OfferRematchResponse> Lobby::OfferRematch(const v1::OfferRematchRequest& req,
                                                             const std::string& token) {
  if (stopping_) {
    return absl::UnavailableError("this lobby instance is shutting down: ask another instance");
  }
  v1::OfferRematchResponse response;
  RematchState state;
  int my_seat = -1;
  absl::Status s = WithMatch(req.match_id(), [&](LiveMatch& live) -> absl::Status {
    absl::StatusOr<int> seat = Authenticate(live, token);
    if (!seat.ok()) return seat.status();
    if (absl::Status s = rematches_.Admit(live.id, *seat); !s.ok()) return s;
    if (absl::Status s = Rematches::CheckRematchable(live.rec); !s.ok()) return s;
    absl::StatusOr<RematchState> st;
    if (req.decline()) {
      st = rematches_.Withdraw(live.id);
    } else {
      const RematchOffer offer =
          rematches_.OfferOf(live.rec, *seat, TokenHash(RematchToken(token)));
      if (offer.accept_now && live.rec.rematch_id == 0) {
        if (absl::Status capacity = CheckBotCapacity(offer.next); !capacity.ok()) return capacity;
      }
      st = rematches_.Offer(offer);
    }
    if (!st.ok()) {
      live.stale = true;
      return st.status();
    }
    state = *st;
    my_seat = *seat;
    if (state.offer != live.rec.rematch_offer || state.rematch_id != live.rec.rematch_id) {
      live.rec.rematch_offer = state.offer;
      live.rec.rematch_id = state.rematch_id;
      Broadcast(live, RematchEvent(live, NowMs()));
    }
    // Once the rematch is made, the watchers that followed for it are done.
    AfterChange(live);
    *response.mutable_match() = ToProto(live, NowMs());
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  if (state.rematch_id == 0 || req.decline()) return response;
  response.set_rematch_id(state.rematch_id);
  response.set_seat(1 - my_seat);
  response.set_seat_token(RematchToken(token));
  if (state.made) {
    // Loaded here, its clock and (a bot to move) its bot armed at once, as a new match's are.
    (void)WithMatch(state.rematch_id, [&](LiveMatch& live) {
      cache_.TryOwn(live);
      AfterChange(live);
      return absl::OkStatus();
    });
  }
  return response;
}

}  // namespace ply::lobby
