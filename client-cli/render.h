// How the terminal client draws things: a board (the game's own text rendering, which already
// carries the coordinates of its notation), either as it is (plain ASCII, for NO_COLOR and pipes)
// or with Unicode pieces, ANSI colours and the last move's squares highlighted; and the tables of
// `ply games`, `ply list` and `ply record`. Pure functions of their inputs, so that golden-file
// tests pin the output.
#ifndef PLY_CLIENT_CLI_RENDER_H_
#define PLY_CLIENT_CLI_RENDER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "engine/registry/any_game.h"
#include "ply/v1/lobby.pb.h"

namespace ply::client {

// kPlain: ASCII only, no escape sequences. kFancy: Unicode glyphs and ANSI colours.
enum class Look { kPlain, kFancy };

// Fancy on a terminal unless NO_COLOR is set (to anything non-empty, per no-color.org).
Look ChooseLook(bool stdout_is_tty, const char* no_color);

struct BoardOptions {
  // Turned half round, so that the player's own pieces start at the bottom (see FlipsFor).
  bool flip = false;
  // The match has ended (perhaps by resignation or on time, which the game itself does not
  // know): the game's "X to move" words would be stale, so they go.
  bool over = false;
};

// The board as the game renders it, restyled for `look`. In kFancy the squares the last move
// changed are highlighted: reverse video where a piece arrived, a grey background where one left.
// Every line ends in '\n'.
std::string RenderBoard(const AnyGame& game, Look look, const BoardOptions& options = {});

// Whether the player of `seat` sees `game` turned round: in draughts Black (the first seat)
// starts at the top of the game's own picture.
bool FlipsFor(std::string_view game, int seat);

// The piece of seat `seat` in `game`, styled, for legends ("●" in red for Connect Four's first
// player; "X" in plain Connect Four).
std::string SideGlyph(std::string_view game, int seat, Look look);

// ANSI helpers that do nothing in kPlain.
std::string Bold(std::string_view text, Look look);
std::string Dim(std::string_view text, Look look);
std::string Colored(std::string_view text, std::string_view sgr, Look look);

// `text` without ANSI escape sequences (for width computations and tests).
std::string StripAnsi(std::string_view text);

// `moves` in the order people read them: "2" before "10", "a2" before "a10", "b1" after both.
std::vector<std::string> SortedMoves(std::vector<std::string> moves);

// "2026-12-01 17:10" in `zone`; "?" for 0 (an older lobby that did not say).
std::string FormatDate(int64_t unix_ms, absl::TimeZone zone);

// `ply games`: each game with its sides, bot levels and options.
std::string GamesTable(const v1::ListGamesResponse& games, Look look);

// A time control in a list's column: "5m+3s", "1m", "0.54s", "24h+1h".
std::string TimeControlText(const v1::TimeControl& tc);

// `ply list`: one row per match (its clock too: an open seat's clock is known before joining),
// then a line saying that there are more (when the lobby has a next page; `limit` is the page
// size asked for) and the (open) footnote when a row has one.
std::string MatchesTable(const v1::ListMatchesResponse& list, int limit, absl::TimeZone zone);
// `ply whois`: a player's ratings and results per game.
std::string PlayerText(const v1::Player& player, absl::TimeZone zone);
// `ply top`: a game's leaderboard.
std::string LeaderboardTable(const std::string& game, const v1::LeaderboardResponse& board);

// `ply record`: who played, when, the result, the moves in notation and a table of every move
// with its time and what a bot's search saw (scores from the first player's side, with a legend).
// `error` is set when the moves do not replay.
std::string RecordText(const v1::Match& match, absl::TimeZone zone, std::string* error);

}  // namespace ply::client

#endif  // PLY_CLIENT_CLI_RENDER_H_
