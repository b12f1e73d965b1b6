// How the terminal client draws a board: the game's own text rendering (which already carries
// the coordinates of its notation), either as it is (plain ASCII, for NO_COLOR and pipes) or with
// Unicode pieces, ANSI colours and the last move's squares highlighted. Pure functions of the
// game state, so that golden-file tests pin the output of every game.
#ifndef PLY_CLIENT_CLI_RENDER_H_
#define PLY_CLIENT_CLI_RENDER_H_

#include <string>
#include <string_view>

#include "engine/registry/any_game.h"

namespace ply::client {

// kPlain: ASCII only, no escape sequences. kFancy: Unicode glyphs and ANSI colours.
enum class Look { kPlain, kFancy };

// Fancy on a terminal unless NO_COLOR is set (to anything non-empty, per no-color.org).
Look ChooseLook(bool stdout_is_tty, const char* no_color);

// The board as the game renders it, restyled for `look`. In kFancy the squares the last move
// changed are highlighted: reverse video where a piece arrived, a grey background where one left.
// Every line ends in '\n'.
std::string RenderBoard(const AnyGame& game, Look look);

// The piece of seat `seat` in `game`, styled, for legends ("●" in red for Connect Four's first
// player; "X" in plain Connect Four).
std::string SideGlyph(std::string_view game, int seat, Look look);

// ANSI helpers that do nothing in kPlain.
std::string Bold(std::string_view text, Look look);
std::string Dim(std::string_view text, Look look);
std::string Colored(std::string_view text, std::string_view sgr, Look look);

// `text` without ANSI escape sequences (for width computations and tests).
std::string StripAnsi(std::string_view text);

}  // namespace ply::client

#endif  // PLY_CLIENT_CLI_RENDER_H_
