// The rules a move must pass before it is committed, written once for every path that moves:
// the gRPC thread's fast path (Lobby::TryMakeMove), the executor's MakeMove, and a bot's reply.
// A check reads the match as cached and the time now; it never writes, so a path that cannot
// afford to explain an error (the fast path) can ask and hand the call on.
#ifndef PLY_LOBBY_SERVER_MATCH_RULES_H_
#define PLY_LOBBY_SERVER_MATCH_RULES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/registry/any_game.h"
#include "lobby-server/match/live_match.h"
#include "lobby-server/storage/store.h"
#include "ply/v1/game.pb.h"
#include "ply/v1/lobby.pb.h"

namespace ply::lobby {

// Move texts are short; a longer one is refused before anything is looked up, so that an error
// never echoes a huge text back.
inline constexpr size_t kMaxMoveBytes = 64;
absl::Status CheckMoveText(std::string_view move);

// Names and option texts in a request are short too.
inline constexpr size_t kMaxTextBytes = 64;

// The game a request for a match names (CreateMatch, Pair), or why not: bounds on what the spec
// may carry, then the game's own checks of its options.
absl::StatusOr<std::unique_ptr<AnyGame>> GameOfSpec(const v1::GameSpec& spec);

// OK when a requested time control is within bounds (100 ms to 24 hours, increment to an hour).
absl::Status CheckTimeControl(const v1::TimeControl& tc);

// The shortest clock a rated game may have: kMinRatedClockMs for a game of 40 moves a side
// (the initial time and 40 increments), as the shortest rated class elsewhere (15 s). Shorter,
// the network's round trips and the lobby's own timing weigh on the result as much as the play
// (the bots' pacing flagged them at 540 ms, rated). A player may still ask for such a game
// casual. INVALID_ARGUMENT saying so.
inline constexpr int64_t kMinRatedClockMs = 15000;
absl::Status CheckRatedClock(const v1::TimeControl& tc);

// The seat of this match whose stored hash is `token`'s, if any (a malformed token has none).
std::optional<int> SeatOfToken(const MatchRecord& rec, std::string_view token);

// OK while the match is being played; otherwise why nobody may act in it.
absl::Status CheckActive(const MatchRecord& rec);

// A player's (or a bot's) move as it arrives.
struct MoveAttempt {
  int seat = -1;
  int expected_ply = 0;
  std::string_view move;
  int64_t now_ms = 0;
};

// The game after `attempt`'s move, or why `attempt.seat` may not play it now: the match is not
// active, the mover's time is up, it is another seat's turn, the caller's view is behind, or
// the move is not legal (FAILED_PRECONDITION, or INVALID_ARGUMENT for the move itself).
// The last move of `rec` when it is `move`, played by `seat` when the match was at
// `expected_ply`: the same move sent again because its answer was lost. Null otherwise.
const MoveRecord* AlreadyPlayed(const MatchRecord& rec, int seat, int expected_ply,
                                std::string_view move);

absl::StatusOr<std::unique_ptr<AnyGame>> CheckMove(const LiveMatch& live,
                                                   const MoveAttempt& attempt);

// What committing `after`'s last move, played by `seat` after `think_ms`, writes.
// The result of a game its rules ended, for people: "Red wins: four in a row", "White wins 40-24:
// the board is full" (the counts of a game decided by one), "draw: stalemate".
std::string ResultText(const GameInfo* info, const GameStatus& status);

MoveCommit PrepareMove(const LiveMatch& live, int seat, const AnyGame& after, int64_t think_ms,
                       std::string bot_json, int64_t now_ms);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_MATCH_RULES_H_
