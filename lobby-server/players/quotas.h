// What one client may hold, so that no client can hold the bots or fill the lobby: bot seats in
// matches it created that are waiting or in play, bot-vs-bot matches, matches waiting for
// players, matches waiting or in play of every kind (a match created and joined at once by the
// same person is in play, not waiting: 10,942 such timed matches from one address in 192 s
// filled PostgreSQL's lock table, each holding its owner's advisory lock, and every create on
// every instance failed), and how many players its address may register. A client is the player
// when the call has one (a player is the same client from any address) and its address too,
// whichever bound is reached first: fresh accounts from one address share that address's bounds,
// which are a multiple of a player's (several people may share one address behind a NAT). Guests
// count by address. The store runs the check with both holdings locked, so that creates at once
// cannot all pass a bound only one of them fits, over every lobby instance.
#ifndef PLY_LOBBY_SERVER_PLAYERS_QUOTAS_H_
#define PLY_LOBBY_SERVER_PLAYERS_QUOTAS_H_

#include <cstdint>
#include <string>

#include "lobby-server/storage/store.h"

namespace ply::lobby {

struct QuotaOptions {
  // Per player (or guest address); 0 turns each off.
  int bot_seats = 0;
  int bot_matches = 0;
  int waiting_matches = 0;
  int open_matches = 0;
  // An address may hold this many times a player's bounds (at least 1).
  int address_multiple = 4;
  // Players one address may register in an hour; 0: no bound.
  int registrations_per_hour = 0;
};

class Quotas {
 public:
  explicit Quotas(QuotaOptions options) : options_(options) {}

  // What the store checks as it makes `rec` (a new match or a rematch), from rec.creator and
  // rec.creator_address; null when no bound applies (an exempt client, no quota set). With
  // `scarce_bots` (the match would take one of the last quarter of the lobby's bot seats) a
  // creator, or an address, that already holds kScarceBotSeats bot seats gets none of them: a
  // few addresses at their quotas (eight at the shipped ones) otherwise booked every bot seat
  // and everyone else was told that every bot is busy. An address's network (an IPv6 /48,
  // Holdings::network_bot_seats) counts as one holder there too.
  QuotaCheck For(const MatchRecord& rec, bool scarce_bots = false) const;
  static constexpr int kScarceBotSeats = 2;
  // The registration bound of `address` ("" for an exempt client: none) at `now_ms`.
  RegistrationLimit Registration(const std::string& address, int64_t now_ms) const;

 private:
  const QuotaOptions options_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_PLAYERS_QUOTAS_H_
