// Quick pairing: the rules of the queue, apart from the Pair streams that wait in it
// (players/pairing.cc, the Lobby's part).
//
// A player waits once, in a pool (the game, its options, the time control, rated or casual),
// with its rating. Each look at its ticket reads whether any instance paired it, else tries to
// pair it with the live waiting player of its pool whose rating is closest, within a gap that
// widens with the longer of the two waits (base_gap + gap_per_s a second, up to max_gap). After
// bot_after without a pairing, the bot level whose rating is nearest the player's is offered
// once. An entry lives only as long as its stream: each look marks it alive (once a second),
// and one not marked for entry_lifetime (its stream or its instance is gone) is paired with
// nobody and removed; the player's next Join takes it over, even if it was paired into a match
// its stream never heard of. The seat token of the match to come is made here and kept in the
// ticket: the queue holds its hash only.
//
// A player who did not come to a paired match (the lobby aborted it: no_show_after), or made
// no first move in a match against a person (paired_first_move, abort_after), may not
// queue again for no_show_cooldown, doubled for each further no-show of the last day (at most
// an hour): walking away cost nothing, so a player could dodge any opponent or seat at will and
// keep the present one queueing again.
#ifndef PLY_LOBBY_SERVER_PLAYERS_MATCHMAKER_H_
#define PLY_LOBBY_SERVER_PLAYERS_MATCHMAKER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lobby-server/storage/store.h"

namespace ply::lobby {

struct MatchmakerOptions {
  double base_gap = 50;
  double gap_per_s = 10;
  double max_gap = 400;
  absl::Duration bot_after = absl::Seconds(20);
  absl::Duration entry_lifetime = absl::Seconds(5);
  // After a no-show; zero: none.
  absl::Duration no_show_cooldown = absl::Minutes(1);
};

// One player's wait, as its stream holds it.
struct QueueTicket {
  QueueEntry entry;
  std::string game;
  // The seat token for the match this entry is paired into (its hash is in the entry).
  std::string seat_token;
  int64_t last_alive_ms = 0;
  int64_t last_waiting_ms = 0;
  bool offered = false;
};

// What one look at a ticket found; at most one of paired and error, and news to tell.
struct QueueLook {
  // Paired, by this instance or another: the match and this player's seat (its token is the
  // ticket's).
  std::optional<Pairing> paired;
  // A bot level offered now (once per ticket): its name and rating.
  std::optional<std::pair<std::string, int>> bot_offer;
  // Time to say how long the player has waited and the gap accepted now (every 2 s).
  std::optional<std::pair<int64_t, int>> waiting;
};

class Matchmaker {
 public:
  // Builds the match of a pairing: both seats taken by the two entries, with their token
  // hashes.
  using MakeMatch =
      std::function<absl::StatusOr<PairedMatch>(const QueueEntry& me, const QueueEntry& them)>;

  Matchmaker(QueueStore* store, MatchmakerOptions options, std::function<int64_t()> now_ms);

  // The pool a player waits in: who can meet whom.
  static std::string Pool(const std::string& game, const GameOptions& options,
                          const std::string& time_control, bool casual);
  // Queues `player` (rating `rating` in `game`) in `pool`: its ticket. FAILED_PRECONDITION
  // when a live entry of the player's was paired a moment ago.
  absl::StatusOr<QueueTicket> Join(const PlayerRecord& player, const std::string& game,
                                   const std::string& pool, double rating);
  // One look at the ticket (see above). ABORTED when the player queued again elsewhere.
  absl::StatusOr<QueueLook> Look(QueueTicket& ticket, const MakeMatch& make);
  // The stream left: the entry goes.
  void Leave(const QueueTicket& ticket);
  // The rating gap accepted after waiting `waited_ms`.
  double GapAfter(int64_t waited_ms) const;

 private:
  int64_t AliveSinceMs(int64_t now_ms) const;

  QueueStore* store_;
  const MatchmakerOptions options_;
  const std::function<int64_t()> now_ms_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_PLAYERS_MATCHMAKER_H_
