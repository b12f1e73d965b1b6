// How clients draw a game, declared once in the game's own header (its kLook) and read from
// there by the terminal client (client-cli/render.cc, through the registry's GameInfo) and the
// web page (through ListGames: ply.v1.BoardLook). A new game says here how it looks; no client
// keeps a table of games.
#ifndef PLY_ENGINE_CORE_BOARD_LOOK_H_
#define PLY_ENGINE_CORE_BOARD_LOOK_H_

#include <array>
#include <string_view>

namespace ply {

// One character of a game's text rendering (Render()) and how a terminal shows it in colour.
struct Glyph {
  char ascii = 0;  // 0: unused
  std::string_view text;
  // SGR parameters ("1;31" is bold red); empty for none.
  std::string_view sgr;
};

struct BoardLook {
  // --- The terminal ---
  // The seats' pieces, first player first, then kings and the like. Shapes tell the sides apart
  // as well as colours, for those who do not see the colours.
  std::array<Glyph, 4> pieces{};
  // Everything else drawn: empty points, lines, walls, a movable grid.
  std::array<Glyph, 4> marks{};
  // One rewrite of the captions in colour, beyond "(C)" -> "(glyph)": "{C}" in `caption_to`
  // stands for piece C.
  std::string_view caption_from;
  std::string_view caption_to;
  // A board turned round for the first seat (draughts: each player sees its own pieces at the
  // bottom). In the text rendering its rows are `turn_cells` cells of `turn_cell_width`
  // characters, then a label that stays with its row.
  bool flip_for_first_seat = false;
  int turn_cells = 0;
  int turn_cell_width = 0;

  // --- The web page (client-web/static/board.js) ---
  // How cells are named: "column" (a column number, 1 from the left), "letter-row-down" (a1 top
  // left), "letter-row-up" (a1 bottom left), "dark-squares" (the dark squares numbered 1.. from
  // the top left, rows of four).
  std::string_view cell_names = "letter-row-down";
  // What is drawn under the pieces: "holes" (a frame with a hole per cell), "squares",
  // "intersections" (pieces on the lines' crossings), "morris" (three squares joined at their
  // middles), "dark-squares" (a checkerboard's dark squares, numbered).
  std::string_view board = "squares";
  // "stones" (discs, the second side's with a ring) or "crosses-and-noughts".
  std::string_view piece_shape = "stones";
  // Colours (#rrggbb, or "none"): the board, an empty point, the two sides, lines, coordinates.
  std::string_view background = "#fbfbfb";
  std::string_view empty = "#fbfbfb";
  std::string_view first = "#151515";
  std::string_view second = "#f7f7f7";
  std::string_view lines = "#333333";
  std::string_view coordinates = "#333333";
};

}  // namespace ply

#endif  // PLY_ENGINE_CORE_BOARD_LOOK_H_
