// Match clocks as pure functions of what is stored (each seat's time left when its last turn
// ended, and when the current turn started) and of the time now, which the caller supplies: a
// lobby reads it from its time source (LobbyOptions::now_ms), a test from wherever it likes.
// Nothing here waits or reads the wall clock.
#ifndef PLY_LOBBY_SERVER_MATCH_CLOCK_H_
#define PLY_LOBBY_SERVER_MATCH_CLOCK_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lobby-server/storage/store.h"

namespace ply::lobby {

// Milliseconds since the Unix epoch, as the lobby's time source gives them.
using NowMsFn = std::function<int64_t()>;
// The real time source.
int64_t WallClockMs();

// Time left on `seat`'s clock at `now_ms`; `to_move` is the seat whose turn it is (-1 when the
// match is not being played). 0 for a match without clocks.
int64_t ClockNow(const MatchRecord& rec, int to_move, int seat, int64_t now_ms);
// ClockNow of every seat, by seat.
std::vector<int64_t> ClocksNow(const MatchRecord& rec, int to_move, int64_t now_ms);
// Whether `to_move`'s clock has run out at `now_ms` (never, without clocks).
bool HasFlagged(const MatchRecord& rec, int to_move, int64_t now_ms);
// When to look at `to_move`'s flag if no move comes: just past the time its clock reads 0, so
// that HasFlagged is true then.
int64_t FlagDueMs(const MatchRecord& rec, int to_move);
// The mover's clock after a move that took `think_ms`: no increment for the move that ends the
// match (`ends_match`), so its clock stops at what was left. 0 for a match without clocks.
int64_t ClockAfterMove(const MatchRecord& rec, int seat, int64_t think_ms, bool ends_match);
// A bot's search budget: its level's time, cut so that the bot never loses on time (about a
// twentieth of what is left plus most of the increment).
int64_t BotBudgetMs(const MatchRecord& rec, int to_move, int64_t level_ms, int64_t now_ms);

// "40 s", "2 min", "1 min 20 s": a span for people, in whole seconds (rounded down).
std::string SpanText(int64_t ms);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_MATCH_CLOCK_H_
