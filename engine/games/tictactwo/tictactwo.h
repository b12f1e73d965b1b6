// Tic-Tac-Two: tic-tac-toe inside a movable grid. The board is `board` x `board` cells; a
// `grid` x `grid` window (the grid) starts near the centre, its top-left corner at row and column
// (board - grid) / 2. X (player 0) and O alternate; each has `pieces` pieces in hand. A turn is
// one of:
//   - place a piece from the hand on an empty cell INSIDE the grid (never outside it);
//   - once each player has placed `unlock` pieces (2 by default), also: move the grid one step in
//     any of the 8 directions, staying wholly on the board, or move one of your own placed
//     pieces (inside or outside the grid) to an empty cell inside the grid.
// Placing stays allowed after the unlock while pieces remain in hand. The grid may move back to
// where it just was. `line` of one player's pieces in a row, column or diagonal that lies wholly
// inside the grid wins; pieces outside the grid never count.
//
// Ending rules, checked in this order after every move:
//   1. the mover has a line inside the grid: the mover wins, even when a grid move also made a
//      line for the opponent (a simultaneous line goes to the player who moved);
//   2. only the opponent has a line (a grid move uncovered it): the opponent wins;
//   3. the position (pieces, grid and side to move) has now occurred for the third time since the
//      last placement: a draw by threefold repetition. The state keeps the hashes of all
//      positions of the game in a fixed-size array, so the search sees repetitions too, and
//      Hash() tells a position's first, second and third occurrence apart;
//   4. `max_plies` plies have been played: a draw by the move limit.
// So every game ends within max_plies plies.
//
// Options: `preset` = classic (5x5 board, 3x3 grid, 3 in a row, 4 pieces each) or big (7x7
// board, 4x4 grid, 4 in a row, 6 pieces each); `board` (4..8), `grid` (3..min(board, 5)), `line`
// (3..grid), `pieces` (line..(grid*grid-1)/2, so the grid always has an empty cell), `unlock`
// (1..pieces, default 2) and `max_plies` (20..250, default 100) override the preset's values.
//
// Notation: cells are a column letter and a row number, `a1` top-left. A placement is the cell
// (`b2`), a piece move is two cells (`b2-c3`), a grid move is `g:` and a direction among n, ne,
// e, se, s, sw, w, nw, where n is towards row 1 (`g:ne`; `grid:ne` is accepted too). Render
// marks the grid with brackets.
#ifndef PLY_ENGINE_GAMES_TICTACTWO_TICTACTWO_H_
#define PLY_ENGINE_GAMES_TICTACTWO_TICTACTWO_H_

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/board_look.h"
#include "engine/core/move_list.h"
#include "engine/core/options.h"
#include "engine/core/types.h"
#include "engine/games/tictactwo/win_chance.h"
#include "engine/search/difficulty.h"

namespace ply {

class TicTacTwo {
 public:
  // Bits 0-5: destination cell (or the direction of a grid move), bits 6-11: origin cell of a
  // piece move, bits 12-13: the kind. Cells are row * board + column from the top-left.
  using Move = uint16_t;
  struct UndoInfo {
    uint8_t last_placement_ply = 0;
    uint8_t repetitions = 1;
  };
  enum Kind : int { kPlace = 0, kStep = 1, kGrid = 2 };
  static constexpr std::string_view kName = "tictactwo";
  // What people read in game lists and on the board (the registry passes it to clients).
  static constexpr std::string_view kTitle = "Tic-Tac-Two";
  static constexpr std::string_view kDescription =
      "three in a row inside a 3x3 grid that moves on a 5x5 board; pieces and the grid move after "
      "the unlock (or the big 7x7 preset)";
  static constexpr std::string_view kSides[2] = {"X", "O"};
  // How to type a move, in one line.
  static constexpr std::string_view kNotationHint =
      "place: b2; move a piece: b2-c3; move the grid: g:ne (n, ne, e, se, s, sw, w, nw).";
  // How clients draw it (engine/core/board_look.h) and how analysis reads its scores (its
  // fitted curve, win_chance.h beside this file).
  static constexpr BoardLook kLook{
      .pieces = {{{'X', "X", "1;31"}, {'O', "O", "1;34"}}},
      .marks = {{{'.', "·", "2"}, {'[', "[", "1;36"}, {']', "]", "1;36"}}},
      .piece_shape = "crosses-and-noughts",
      .first = "#1b4f9c",
      .second = "#b3261e"};
  static constexpr WinChanceCurve kWinChance = kTictactwoWinChance;
  static constexpr Move kNoMove = 0xffff;
  static constexpr int kMaxBoard = 8;
  static constexpr int kMaxGrid = 5;
  static constexpr int kMaxPieces = (kMaxGrid * kMaxGrid - 1) / 2;
  static constexpr int kMaxPlyLimit = 250;
  // Every line of length >= 3 in a 5x5 grid: 15 rows, 15 columns, 18 diagonals.
  static constexpr int kMaxLines = 48;
  static constexpr int kMaxMoves = kMaxGrid * kMaxGrid * (kMaxPieces + 1) + 8;
  static constexpr int kHistorySize = 3 << 12;
  static constexpr bool kPerftCountsFinishedGames = false;

  static constexpr Move PlaceMove(int cell) { return static_cast<Move>(cell); }
  static constexpr Move StepMove(int from, int to) {
    return static_cast<Move>(kStep << 12 | from << 6 | to);
  }
  static constexpr Move GridMove(int direction) {
    return static_cast<Move>(kGrid << 12 | direction);
  }
  static constexpr Kind KindOf(Move m) { return static_cast<Kind>(m >> 12); }
  static constexpr int To(Move m) { return m & 63; }
  static constexpr int From(Move m) { return (m >> 6) & 63; }

  static absl::StatusOr<TicTacTwo> Create(const GameOptions& options);
  static std::vector<OptionInfo> OptionInfos();
  static std::vector<Difficulty> Levels();
  GameOptions EffectiveOptions() const;

  void GenerateMoves(MoveList<Move, kMaxMoves>& moves) const;
  void Make(Move m, UndoInfo& undo);
  void Unmake(Move m, const UndoInfo& undo);
  Outcome GetOutcome() const {
    if (winner_ >= 0) return winner_ == SideToMove() ? Outcome::kWin : Outcome::kLoss;
    return end_ == End::kNone ? Outcome::kOngoing : Outcome::kDraw;
  }
  GameStatus Status() const;
  Player SideToMove() const { return ply_ & 1; }

  Score Evaluate() const;
  // The position's key, and whether it is here for the second or third time: a position met
  // again has a different future (one more repetition ends the game), so the transposition
  // table must not mix the two.
  uint64_t Hash() const { return hash_ ^ repetition_keys_[repetitions_]; }
  uint64_t ComputeHash() const;
  // Winning moves, then blocks, then cells on many open lines; grid moves that hand the
  // opponent a line last.
  int MoveOrderScore(Move m) const;
  static int HistoryIndex(Move m) { return m; }

  std::string MoveToText(Move m) const;
  absl::StatusOr<Move> ParseMove(std::string_view text) const;
  std::string Render() const;

  bool operator==(const TicTacTwo&) const = default;

  int board() const { return n_; }
  int grid() const { return g_; }
  int ply() const { return ply_; }
  uint64_t pieces(Player p) const { return pieces_[p]; }
  uint64_t grid_mask() const { return grid_mask_; }
  // Row and column of the grid's top-left cell.
  int grid_row() const { return grid_origin_ / n_; }
  int grid_col() const { return grid_origin_ % n_; }
  bool Unlocked() const {
    return std::popcount(pieces_[0]) >= unlock_ && std::popcount(pieces_[1]) >= unlock_;
  }
  // Does `stones` hold a line inside the grid whose top-left cell is `origin`?
  bool HasLine(uint64_t stones, int origin) const;

 private:
  enum class End : uint8_t { kNone, kRepetition, kMoveLimit };
  static constexpr int kDirRow[8] = {-1, -1, 0, 1, 1, 1, 0, -1};
  static constexpr int kDirCol[8] = {0, 1, 1, 1, 0, -1, -1, -1};

  TicTacTwo(int board, int grid, int line, int pieces, int unlock, int max_plies);

  // The grid's top-left cell after a step in `direction`, or -1 when it would leave the board.
  int GridOriginAfter(int direction) const;
  uint64_t PieceKey(int player, int cell) const;
  uint64_t GridKey(int origin) const;
  uint64_t SideKey() const;
  // The key of the pieces, the grid and the side to move, from scratch.
  uint64_t PositionHash() const;
  // How often the current position has occurred, this time included (at most 3).
  int CountRepetitions() const;

  // Fixed by the options.
  int n_;
  int g_;
  int line_;
  int max_pieces_;
  int unlock_;
  int max_plies_;
  int num_lines_;
  uint64_t lines_[kMaxLines];  // with the grid at origin 0
  // Bit i of lines_through_[cell] is set when lines_[i] contains the cell.
  uint64_t lines_through_[kMaxBoard * kMaxBoard];
  uint64_t grid_at_zero_;
  uint64_t centre_at_zero_;  // the centre cell (odd grid) or the central 2x2 (even grid)
  uint64_t salt_;
  uint64_t repetition_keys_[4] = {};  // by the number of occurrences; none for the first

  // The position.
  uint64_t pieces_[2] = {0, 0};
  int grid_origin_;
  uint64_t grid_mask_;
  uint64_t hash_ = 0;  // PositionHash(), kept up to date
  int ply_ = 0;
  int repetitions_ = 1;
  int last_placement_ply_ = 0;
  int winner_ = -1;
  End end_ = End::kNone;
  // hashes_[i] is the position hash after ply i; entries past ply_ are zero.
  uint64_t hashes_[kMaxPlyLimit + 1] = {};
};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_TICTACTWO_TICTACTWO_H_
