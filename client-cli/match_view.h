// The client's picture of one match, kept up to date from the lobby's WatchMatch events, with the
// game replayed locally (for its legal moves and its rendering); and the screen that shows it,
// composed as text without any I/O so that tests can read it.
#ifndef PLY_CLIENT_CLI_MATCH_VIEW_H_
#define PLY_CLIENT_CLI_MATCH_VIEW_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client-cli/render.h"
#include "engine/registry/any_game.h"
#include "ply/v1/lobby.pb.h"

namespace ply::client {

class MatchView {
 public:
  // A whole match (a snapshot, a resync, an RPC's reply). Clocks count from `received`.
  absl::Status Reset(const v1::Match& match, absl::Time received);
  // One WatchMatch event. A move already seen is ignored; a move that skips one is an error (the
  // caller then reloads the match).
  absl::Status Apply(const v1::MatchEvent& event, absl::Time received);

  bool loaded() const { return game_ != nullptr; }
  const v1::Match& match() const { return match_; }
  const AnyGame& game() const { return *game_; }
  int plies() const { return match_.moves_size(); }
  bool over() const { return match_.status() == v1::MATCH_STATUS_FINISHED; }
  bool active() const { return match_.status() == v1::MATCH_STATUS_ACTIVE; }
  // A bot seat is to move in an active match.
  bool BotToMove() const;
  // Time left on `seat`'s clock at `now` (the side to move's clock runs); 0 without clocks.
  int64_t ClockMs(int seat, absl::Time now) const;
  // "Red", or "seat 1" when the lobby did not say.
  std::string Side(int seat) const;
  // "alice", "bot (hard)", or "(open)".
  std::string Player(int seat) const;

 private:
  v1::Match match_;
  std::unique_ptr<AnyGame> game_;
  absl::Time clocks_at_;
};

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
std::vector<std::string> ComposeScreen(const MatchView& view, const ScreenOptions& options);

// When the opponent of `seat` may claim (ms since the Unix epoch): `seat` is away and to move
// in an untimed match that takes claims, and every side has moved (before that, the lobby aborts
// instead); 0 otherwise.
int64_t ClaimAtMs(const v1::Match& match, int seat);
// "bob left the game", and for his opponent when a claim can be made ("— you can claim the win
// in 1:20"); nothing for those who are here.
std::vector<std::string> PresenceLines(const MatchView& view, const ScreenOptions& options);
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

#endif  // PLY_CLIENT_CLI_MATCH_VIEW_H_
