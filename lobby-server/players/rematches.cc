#include "lobby-server/players/rematches.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ply::lobby {

Rematches::Rematches(RematchStore* store, const Quotas* quotas, std::function<int64_t()> now_ms)
    : store_(store), quotas_(quotas), now_ms_(std::move(now_ms)) {}

absl::Status Rematches::Admit(int64_t match_id, int seat) {
  const int64_t now = now_ms_();
  std::lock_guard<std::mutex> lock(mu_);
  if (calls_.size() > 10000) {
    // Seats whose bucket has refilled are as good as new: forgotten.
    absl::erase_if(calls_, [&](const auto& entry) {
      return now - entry.second.refilled_ms >= kEveryMs * kBurst;
    });
  }
  auto [it, fresh] = calls_.try_emplace({match_id, seat});
  Bucket& b = it->second;
  b.tokens = fresh ? kBurst
                   : std::min(kBurst, b.tokens + static_cast<double>(now - b.refilled_ms) /
                                                     static_cast<double>(kEveryMs));
  b.refilled_ms = now;
  if (b.tokens < 1) {
    return absl::ResourceExhaustedError(
        "rematch offers and answers for this match come too fast: wait a few seconds");
  }
  b.tokens -= 1;
  return absl::OkStatus();
}

absl::Status Rematches::CheckRematchable(const MatchRecord& old) {
  if (old.status != MatchStatus::kFinished) {
    return absl::FailedPreconditionError(
        absl::StrCat("match ", old.id, " is not over: a rematch is offered after the game"));
  }
  if (old.result.reason == EndReason::kCancelled) {
    return absl::FailedPreconditionError(absl::StrCat(
        "match ", old.id, " was cancelled before it began: there is nothing to rematch"));
  }
  if (old.seats.size() != 2) {
    return absl::FailedPreconditionError("a rematch is for a match of two seats");
  }
  return absl::OkStatus();
}

RematchOffer Rematches::OfferOf(const MatchRecord& old, int seat, std::string token_hash) const {
  RematchOffer offer;
  offer.match_id = old.id;
  offer.seat = seat;
  offer.token_hash = std::move(token_hash);
  offer.accept_now = old.seats[1 - seat].kind == SeatKind::kBot;
  MatchRecord& next = offer.next;
  next.game = old.game;
  next.options = old.options;
  next.time_initial_ms = old.time_initial_ms;
  next.time_increment_ms = old.time_increment_ms;
  next.bot_pacing_ms = old.bot_pacing_ms;
  next.rated = old.rated;
  // The old match's creator's: it counts against the same quotas.
  next.creator = old.creator;
  next.creator_address = old.creator_address;
  next.creator_network = old.creator_network;
  next.created_ms = now_ms_();
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
  offer.check = quotas_->For(next);
  return offer;
}

absl::StatusOr<RematchState> Rematches::Offer(const RematchOffer& offer) {
  return store_->OfferRematch(offer);
}

absl::StatusOr<RematchState> Rematches::Withdraw(int64_t match_id) {
  return store_->WithdrawRematch(match_id);
}

}  // namespace ply::lobby
