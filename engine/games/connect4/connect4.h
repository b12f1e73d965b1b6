// Connect Four: two players drop discs into columns; a disc falls to the lowest empty cell. The
// first to line up four of their own discs horizontally, vertically or diagonally wins; a full
// board with no four is a draw. Red (player 0) moves first.
//
// Options: `width` and `height` (default 7x6; each 4..12 with width * (height + 1) <= 64) and
// `cylinder` (default false): on a cylinder the columns wrap around, so horizontal and diagonal
// lines may run over the edge from the last column to the first.
//
// Notation: the column number, 1..width, left to right.
//
// Representation: two bitboards, column-major with height + 1 bits per column (the top bit of
// each column is an always-empty sentinel that stops lines from running across columns). Cell
// (column c, row r), row 0 at the bottom, is bit c * (height + 1) + r. The exact solver in
// solver.h uses the same layout.
#ifndef PLY_ENGINE_GAMES_CONNECT4_CONNECT4_H_
#define PLY_ENGINE_GAMES_CONNECT4_CONNECT4_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/board_look.h"
#include "engine/core/move_list.h"
#include "engine/core/options.h"
#include "engine/core/types.h"
#include "engine/games/connect4/win_chance.h"
#include "engine/search/difficulty.h"
#include "engine/search/search.h"

namespace ply {

class Connect4 {
 public:
  // A move is a 0-based column.
  using Move = uint8_t;
  struct UndoInfo {};
  static constexpr std::string_view kName = "connect4";
  // What people read in game lists and on the board (the registry passes it to clients).
  static constexpr std::string_view kTitle = "Connect Four";
  static constexpr std::string_view kDescription =
      "drop discs into columns; four in a row wins (any size, or on a cylinder where the columns "
      "wrap around)";
  static constexpr std::string_view kSides[2] = {"Red", "Yellow"};
  // How to type a move, in one line.
  static constexpr std::string_view kNotationHint = "a column number, 1 from the left (e.g. 4).";
  // How clients draw it (engine/core/board_look.h) and how analysis reads its scores (its
  // fitted curve, win_chance.h beside this file).
  static constexpr BoardLook kLook{.pieces = {{{'X', "●", "1;31"}, {'O', "○", "1;33"}}},
                                   .marks = {{{'.', "·", "2"}}},
                                   .cell_names = "column",
                                   .board = "holes",
                                   .background = "#1f4fa8",
                                   .empty = "#eef2f8",
                                   .first = "#d7263d",
                                   .second = "#f6c90e",
                                   .lines = "#0f2f6a",
                                   .coordinates = "#ffffff"};
  static constexpr WinChanceCurve kWinChance = kConnect4WinChance;
  static constexpr Move kNoMove = 0xff;
  static constexpr int kMaxWidth = 12;
  static constexpr int kMaxMoves = kMaxWidth;
  static constexpr int kHistorySize = kMaxWidth;
  static constexpr bool kPerftCountsFinishedGames = false;
  // What having the move is worth to Evaluate: about what the side that just moved gained with
  // its extra stone, so that leaves at odd and even depths weigh alike.
  static constexpr Score kTempo = 16;

  static absl::StatusOr<Connect4> Create(const GameOptions& options);
  static std::vector<OptionInfo> OptionInfos();
  static std::vector<Difficulty> Levels();
  GameOptions EffectiveOptions() const;

  void GenerateMoves(MoveList<Move, kMaxMoves>& moves) const {
    for (int i = 0; i < width_; ++i) {
      int c = column_order_[i];
      if ((mask_ & TopCell(c)) == 0) moves.push_back(static_cast<Move>(c));
    }
  }

  void Make(Move column, UndoInfo&) {
    uint64_t cell = (mask_ + BottomCell(column)) & ColumnMask(column);
    int p = SideToMove();
    stones_[p] |= cell;
    mask_ |= cell;
    hash_ ^= CellKey(p, std::countr_zero(cell));
    ++ply_;
    last_move_won_ = HasFour(stones_[p]);
  }

  void Unmake(Move column, const UndoInfo&) {
    --ply_;
    int p = SideToMove();
    // The highest stone in the column is the one just played.
    uint64_t col = mask_ & ColumnMask(column);
    uint64_t cell = uint64_t{1} << (63 - std::countl_zero(col));
    stones_[p] ^= cell;
    mask_ ^= cell;
    hash_ ^= CellKey(p, std::countr_zero(cell));
    last_move_won_ = false;
  }

  Outcome GetOutcome() const {
    if (last_move_won_) return Outcome::kLoss;
    if (ply_ == width_ * height_) return Outcome::kDraw;
    return Outcome::kOngoing;
  }
  GameStatus Status() const;
  Player SideToMove() const { return ply_ & 1; }

  Score Evaluate() const;
  uint64_t Hash() const { return hash_; }
  uint64_t ComputeHash() const;
  // Moves that create more winning cells first, then central columns.
  int MoveOrderScore(Move column) const;
  static int HistoryIndex(Move column) { return column; }

  std::string MoveToText(Move column) const { return std::to_string(column + 1); }
  absl::StatusOr<Move> ParseMove(std::string_view text) const;
  std::string Render() const;

  bool operator==(const Connect4&) const = default;

  // The `perfect` level: on 7x6, the opening book (book.h) while it covers the position;
  // otherwise the exact solver (solver.h) on plain boards, within nine tenths of the budget.
  // nullopt on boards the solver does not take; a result without a move (`has_move` false, its
  // nodes and time spent) when it cannot prove the result in time: the caller then searches on
  // what is left.
  // Solve keeps the solvers it makes for the thread's next calls: the 7x6 board's and the last
  // other size's, each with a table of kSolverTableMegabytes (mapped at once, its pages touched
  // as a solve grows into them), so at most 2 * kSolverTableMegabytes per thread.
  static std::optional<SearchResult<Move>> Solve(Connect4& game, const SearchLimits& limits);
  static constexpr size_t kSolverTableMegabytes = 64;
  // How many solvers the calling thread holds (0 to 2), for tests.
  static int SolversOfThisThread();

  int width() const { return width_; }
  int height() const { return height_; }
  bool cylinder() const { return cylinder_; }
  int ply() const { return ply_; }
  uint64_t stones(Player p) const { return stones_[p]; }
  uint64_t mask() const { return mask_; }
  // Empty cells where `p` would complete four.
  uint64_t WinningCells(Player p) const { return WinningCellsOf(stones_[p]) & ~mask_; }

 private:
  Connect4(int width, int height, bool cylinder);

  static constexpr Score kZugzwang = 60;
  static constexpr Score kImmediateWin = 2000;

  uint64_t BottomCell(int c) const { return uint64_t{1} << (c * (height_ + 1)); }
  uint64_t TopCell(int c) const { return uint64_t{1} << (c * (height_ + 1) + height_ - 1); }
  uint64_t ColumnMask(int c) const { return ((uint64_t{1} << height_) - 1) << (c * (height_ + 1)); }
  uint64_t CellKey(int player, int bit) const;

  // Moves every cell `s` bits towards lower indices (towards lower columns for s >= height+1);
  // on a cylinder the board wraps around, otherwise cells fall off the edge.
  uint64_t Down(uint64_t b, int s) const {
    return cylinder_ ? ((b >> s) | (b << (bits_ - s))) & board_ : b >> s;
  }
  uint64_t Up(uint64_t b, int s) const {
    return cylinder_ ? ((b << s) | (b >> (bits_ - s))) & board_ : (b << s) & board_;
  }
  bool HasFour(uint64_t b) const {
    for (int s : directions_) {
      uint64_t pairs = b & Down(b, s);
      if (pairs & Down(pairs, 2 * s)) return true;
    }
    return false;
  }
  // Cells (empty or not) that would complete a four for stones `b`.
  uint64_t WinningCellsOf(uint64_t b) const;

  int width_;
  int height_;
  bool cylinder_;
  int bits_;           // width * (height + 1)
  uint64_t board_;     // every playable cell
  uint64_t bottom_;    // the bottom cell of every column
  uint64_t odd_rows_;  // rows 1, 3, 5, ... counted from 1 at the bottom
  uint64_t salt_;      // Zobrist salt for this variant
  int directions_[4];
  int column_order_[kMaxWidth];  // centre first

  uint64_t stones_[2] = {0, 0};
  uint64_t mask_ = 0;
  uint64_t hash_ = 0;
  int ply_ = 0;
  bool last_move_won_ = false;
};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_CONNECT4_CONNECT4_H_
