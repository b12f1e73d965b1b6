// The position as the web page draws it: the game's own text rendering (the lobby sends it with
// every move) read back into rows of cell codes, so that the page needs no game rules of its own
// to draw any game, and so that a list of matches can show small boards without replaying them.
#ifndef PLY_CLIENT_WEB_BOARD_MODEL_H_
#define PLY_CLIENT_WEB_BOARD_MODEL_H_

#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace ply::web {

// {"rows": ["0012", ...], top row first} with one character per cell:
//   '0' empty, '1' a piece of the first player, '2' of the second, '3' / '4' their kings
//   (draughts), '#' a blocked cell (Reversi walls), ' ' no cell (the light squares of draughts,
//   the holes of the Morris board).
// Tic-Tac-Two adds "grid": [first column, first row, last column, last row] (0-based); games with
// pieces in hand add "hand": [first player's, second player's]. Null when the text is not a
// board of `game` (a newer engine's rendering): the page then shows the text itself.
nlohmann::json BoardModel(std::string_view game, std::string_view text);

}  // namespace ply::web

#endif  // PLY_CLIENT_WEB_BOARD_MODEL_H_
