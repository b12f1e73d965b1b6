// The terminal's screen of one match (lobby-client/match_model.h keeps the match itself),
// composed as text without any I/O so that tests can read it.
#ifndef PLY_CLIENT_CLI_SCREEN_H_
#define PLY_CLIENT_CLI_SCREEN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client-cli/render.h"
#include "engine/registry/any_game.h"
#include "lobby-client/match_model.h"
#include "ply/v1/lobby.pb.h"

namespace ply::client {

// What the screen shows besides the match itself.
struct ScreenOptions {
  Look look = Look::kPlain;
  // The seat this client plays; -1 for a spectator.
  int my_seat = -1;
  // A table of recent moves. A spectator's, and everyone's once the match is over, also says what
  // each bot's search saw; a player does not see the engine's verdict on a game still going on.
  bool move_log = false;
  // Lines of news (errors, connection notices), oldest first.
  std::vector<std::string> notices;
  // The input line ("" for none), shown last.
  std::string prompt;
  // Frame of the thinking spinner; -1 for none (output that is not redrawn).
  int spinner = 0;
  absl::Time now;
  // The terminal's height; the move log shrinks to fit. 0: no limit.
  int rows = 0;
  // The terminal's width: where there is room, the move log goes beside the board instead of
  // under it. 0: unknown (under it).
  int cols = 0;
};

// A clock under this turns red.
inline constexpr int64_t kLowClockMs = 10000;
// Moves a player's move log shows at most (a spectator's shows what fits).
inline constexpr int kPlayerLogMoves = 10;

// The screen, line by line (no trailing newlines).
std::vector<std::string> ComposeScreen(const MatchModel& view, const ScreenOptions& options);

// "bob left the game", and for his opponent when a claim can be made ("— you can claim the win
// in 1:20"); nothing for those who are here.
std::vector<std::string> PresenceLines(const MatchModel& view, const ScreenOptions& options);
// "1:05", "0:09.4", "1:02:03".
std::string FormatClock(int64_t ms);
// "950", "35.2k", "1.20M".
std::string FormatCount(int64_t n);
// What a bot's search saw, its score from the first player's side (so that scores of both sides'
// moves compare): "depth 14, -35, 1.20M nodes", "depth 9, Yellow wins in 3, 950 nodes", "random
// move" (a level that sometimes plays at random searched nothing); "" for a person's move.
std::string BotSummary(const v1::MoveRecord& move, const v1::Match& match);
// "Scores are from Red's side: + is good for Red, - for Yellow." when some move has a score; "".
std::string ScoreLegend(const v1::Match& match);
// The match's record in notation: "1. 4 4  2. 3 5 ..." (moves numbered per pair).
std::string MoveListText(const v1::Match& match);
// "Game over: Red wins: four in a row." and, for a player, "You won." and friends.
std::vector<std::string> GameOverLines(const v1::Match& match, int my_seat);

}  // namespace ply::client

#endif  // PLY_CLIENT_CLI_SCREEN_H_
