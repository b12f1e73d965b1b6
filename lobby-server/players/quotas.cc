#include "lobby-server/players/quotas.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ply::lobby {
namespace {

// The bounds one holder may have: a player's, or an address's (a multiple of them).
struct Bounds {
  int bot_seats = 0;
  int bot_matches = 0;
  int waiting = 0;
  int open = 0;
};

// Whether `held` may take one more match of this shape within `bounds`; `who` names the holder
// in the refusal ("you", "your address").
absl::Status Within(const Holdings& held, const Bounds& bounds, int bot_seats, bool bots_only,
                    bool waiting, const std::string& who) {
  if (bounds.open > 0 && held.open >= bounds.open) {
    return absl::ResourceExhaustedError(absl::StrCat(
        who, " already ", who == "you" ? "have " : "has ", held.open,
        " matches waiting or in play, the most ", who == "you" ? "one client" : "one address",
        " may: finish one before starting another"));
  }
  if (waiting && bounds.waiting > 0 && held.waiting >= bounds.waiting) {
    return absl::ResourceExhaustedError(absl::StrCat(
        who, " already ", who == "you" ? "have " : "has ", held.waiting,
        " matches waiting for players: let one start, or expire, before opening another"));
  }
  if (bots_only && bounds.bot_matches > 0 && held.bot_matches >= bounds.bot_matches) {
    return absl::ResourceExhaustedError(
        absl::StrCat(who, " already ", who == "you" ? "run " : "runs ", held.bot_matches,
                     " bot-vs-bot matches, the most ", who == "you" ? "one client" : "one address",
                     " may: wait for one to end"));
  }
  if (bot_seats > 0 && bounds.bot_seats > 0 && held.bot_seats + bot_seats > bounds.bot_seats) {
    return absl::ResourceExhaustedError(absl::StrCat(
        who == "you" ? "your matches already have " : "the matches made from your address have ",
        held.bot_seats, " bot seats and ", who == "you" ? "one client" : "one address",
        " may have ", bounds.bot_seats, ": finish or resign one first"));
  }
  return absl::OkStatus();
}

}  // namespace

QuotaCheck Quotas::For(const MatchRecord& rec, bool scarce_bots) const {
  int bot_seats = 0;
  for (const SeatRecord& s : rec.seats) bot_seats += s.kind == SeatKind::kBot ? 1 : 0;
  const bool bots_only = bot_seats == static_cast<int>(rec.seats.size());
  const bool waiting = rec.status == MatchStatus::kWaiting;
  const bool scarce = scarce_bots && bot_seats > 0;
  if (rec.creator.empty() ||
      !((waiting && options_.waiting_matches > 0) || (bot_seats > 0 && options_.bot_seats > 0) ||
        (bots_only && options_.bot_matches > 0) || options_.open_matches > 0 || scarce)) {
    return nullptr;
  }
  const Bounds mine = {.bot_seats = options_.bot_seats,
                       .bot_matches = options_.bot_matches,
                       .waiting = options_.waiting_matches,
                       .open = options_.open_matches};
  const int k = std::max(1, options_.address_multiple);
  const Bounds address = {.bot_seats = mine.bot_seats * k,
                          .bot_matches = mine.bot_matches * k,
                          .waiting = mine.waiting * k,
                          .open = mine.open * k};
  // A guest's own bound counts the guests' matches of its address; the address's counts
  // every match made from it, by players and guests alike.
  const bool by_address = !rec.creator_address.empty();
  return [=](const Holdings& held, const Holdings& at_address) -> absl::Status {
    if (scarce) {
      // A network where fresh addresses are free to its holder (an IPv6 /48 of /64s) is one
      // holder here: each new /64 took two of the last seats again, until none was left.
      std::string held_by;
      if (held.bot_seats >= kScarceBotSeats) {
        held_by = absl::StrCat("you already have ", held.bot_seats);
      } else if (by_address && at_address.bot_seats >= kScarceBotSeats) {
        held_by = absl::StrCat("your address already has ", at_address.bot_seats);
      } else if (by_address && at_address.network_bot_seats >= kScarceBotSeats) {
        held_by = absl::StrCat("your network already has ", at_address.network_bot_seats);
      }
      if (!held_by.empty()) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "nearly every bot is busy: the last bot seats are kept for people who hold fewer "
            "than ",
            kScarceBotSeats, " (", held_by, "): finish one first, or try again shortly"));
      }
    }
    if (absl::Status s = Within(held, mine, bot_seats, bots_only, waiting, "you"); !s.ok()) {
      return s;
    }
    if (!by_address) return absl::OkStatus();
    return Within(at_address, address, bot_seats, bots_only, waiting, "your address");
  };
}

RegistrationLimit Quotas::Registration(const std::string& address, int64_t now_ms) const {
  if (address.empty() || options_.registrations_per_hour <= 0) return {};
  return {
      .address = address, .since_ms = now_ms - 3600 * 1000, .max = options_.registrations_per_hour};
}

}  // namespace ply::lobby
