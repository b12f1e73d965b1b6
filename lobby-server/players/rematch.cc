// Rematches, the Lobby's part: a player of a finished match offers one (or accepts the other's,
// by offering too), withdraws or declines; the store decides in one transaction whether this
// offer makes the rematch, so that offers at once make one. Each player's seat in the rematch
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

bool Lobby::AllowRematchCall(int64_t match_id, int seat) {
  // A few at once, then one every two seconds: people make a handful; a loop of offers and
  // withdrawals (each a write and a notification to every instance) is cut off.
  constexpr double kBurst = 6;
  constexpr absl::Duration kEvery = absl::Seconds(2);
  const absl::Time now = absl::Now();
  std::lock_guard<std::mutex> lock(rematch_mu_);
  if (rematch_calls_.size() > 10000) {
    // Seats whose bucket has refilled are as good as new: forgotten.
    absl::erase_if(rematch_calls_, [&](const auto& entry) {
      return now - entry.second.refilled >= kEvery * kBurst;
    });
  }
  auto [it, fresh] = rematch_calls_.try_emplace({match_id, seat});
  RematchBucket& b = it->second;
  if (fresh) {
    b.tokens = kBurst;
  } else {
    b.tokens = std::min(kBurst, b.tokens + (now - b.refilled) / kEvery);
  }
  b.refilled = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

MatchRecord Lobby::RematchOf(const MatchRecord& old) const {
  MatchRecord next;
  next.game = old.game;
  next.options = old.options;
  next.time_initial_ms = old.time_initial_ms;
  next.time_increment_ms = old.time_increment_ms;
  next.bot_pacing_ms = old.bot_pacing_ms;
  next.rated = old.rated;
  next.creator = old.creator;
  next.creator_address = old.creator_address;
  next.created_ms = NowMs();
  next.turn_started_ms = next.created_ms;
  next.status = MatchStatus::kActive;
  const int seats = static_cast<int>(old.seats.size());
  for (int i = 0; i < seats; ++i) {
    const SeatRecord& was = old.seats[seats - 1 - i];
    SeatRecord s;
    s.kind = was.kind;
    s.difficulty = was.difficulty;
    s.display_name = was.display_name;
    s.player_id = was.player_id;
    s.player = was.player;
    s.clock_ms = old.time_initial_ms.value_or(0);
    next.seats.push_back(std::move(s));
  }
  return next;
}

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
    if (!AllowRematchCall(live.id, *seat)) {
      return absl::ResourceExhaustedError(
          "rematch offers and answers for this match come too fast: wait a few seconds");
    }
    if (live.rec.status != MatchStatus::kFinished) {
      return absl::FailedPreconditionError(
          absl::StrCat("match ", live.id, " is not over: a rematch is offered after the game"));
    }
    if (live.rec.result.reason == EndReason::kCancelled) {
      return absl::FailedPreconditionError(absl::StrCat(
          "match ", live.id, " was cancelled before it began: there is nothing to rematch"));
    }
    if (live.rec.seats.size() != 2) {
      return absl::FailedPreconditionError("a rematch is for a match of two seats");
    }
    absl::StatusOr<RematchState> st;
    if (req.decline()) {
      st = store_->WithdrawRematch(live.id);
    } else {
      RematchOffer offer{.match_id = live.id,
                         .seat = *seat,
                         .token_hash = TokenHash(RematchToken(token)),
                         .next = RematchOf(live.rec),
                         .accept_now = live.rec.seats[1 - *seat].kind == SeatKind::kBot};
      // A rematch is a new match of its creator's, within the same quotas.
      offer.check = quotas_.For(offer.next);
      if (offer.accept_now && live.rec.rematch_id == 0) {
        if (absl::Status capacity = CheckBotCapacity(offer.next); !capacity.ok()) return capacity;
      }
      st = store_->OfferRematch(offer);
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
