// The interactive screens: playing a seat or watching a match live (one poll() loop over the
// keyboard and the match's event stream, so the board changes the moment the opponent moves),
// and stepping through a finished record.
#ifndef PLY_CLIENT_CLI_SESSION_H_
#define PLY_CLIENT_CLI_SESSION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "client-cli/render.h"
#include "client-cli/seat_store.h"
#include "lobby-client/lobby_link.h"
#include "ply/v1/lobby.pb.h"

namespace ply::client {

struct SessionOptions {
  int64_t match_id = 0;
  // Play this seat; without one, watch.
  std::optional<SeatTicket> seat;
  Look look = Look::kPlain;
  // Redraw in place (stdout is a terminal); otherwise print what changes, line by line.
  bool tty = false;
  // On a terminal, ring the bell when the opponent moves after making us wait this long (a
  // player who looked away hears that it is their turn); zero: never.
  absl::Duration bell_after = absl::Seconds(10);
  // Where a rematch's seat is kept (none: not kept); a player's final screen offers `r`.
  SeatStore* store = nullptr;
  // Offer a rematch as the final screen opens (`ply rematch` on a match already over).
  bool offer_rematch = false;
};

// Runs until the match ends or the user leaves; returns the process exit code. When both
// players agree to a rematch on the final screen, goes on into it (and so on).
int RunSession(LobbyClient& lobby, const SessionOptions& options);

// Steps through `match` move by move (keys on a terminal; every position in turn otherwise).
// `analysis` (may be null): the match's stored analysis, shown under each move.
int RunReplay(const v1::Match& match, Look look, bool tty,
              const v1::MatchAnalysis* analysis = nullptr);

}  // namespace ply::client

#endif  // PLY_CLIENT_CLI_SESSION_H_
