// Reversi (Othello). Black (X, player 0) and White (O, player 1) take turns placing a disc on an
// empty cell so that it brackets one or more straight lines (horizontal, vertical, diagonal) of
// the opponent's discs between the new disc and another disc of the mover; those discs turn over.
// A side with no such move must pass (`pass` is a move, and the only legal one then). When
// neither side can move, which is the same as two passes in a row, the game ends at once (no
// pass moves are played for it); the side with more discs wins, equal counts draw. The game
// always ends: every placing move fills a cell and a pass is only legal when the opponent can
// move next.
//
// Options: `width` and `height` (default 8x8; each even, 4..16, rectangles allowed) and `walls`,
// a list of blocked cells in move notation separated by '+', ';', ':' or spaces (e.g.
// `walls=c3+f6`). A wall never holds a disc and a line of discs does not pass through it. The
// start is the standard one: four discs in the centre, White on d4 and e5, Black on e4 and d5
// (for 8x8), which therefore may not be walls. Black moves first.
//
// Notation: column letter and row number, `a1` top-left as in the usual diagrams (`d3`, `f5`),
// upper case accepted; `pass`.
//
// Representation: one bit set per side. Boards of up to 64 cells use a uint64_t (the standard
// 8x8 board with hand-written Kogge-Stone move generation from bitboard8.h, other sizes through
// the generic geometry in bits.h); larger boards use a 256-bit set with the same code. The exact
// endgame solver is in endgame.h.
#ifndef PLY_ENGINE_GAMES_REVERSI_REVERSI_H_
#define PLY_ENGINE_GAMES_REVERSI_REVERSI_H_

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
#include "engine/games/reversi/bits.h"
#include "engine/games/reversi/win_chance.h"
#include "engine/search/difficulty.h"
#include "engine/search/search.h"

namespace ply {

class Reversi {
 public:
  // A cell index (row * width + column, a1 = 0) or kPass.
  using Move = uint16_t;
  struct UndoInfo {
    reversi::Bits256 flips;
    reversi::Bits256 moves;
    uint64_t hash;
  };
  static constexpr std::string_view kName = "reversi";
  // What people read in game lists and on the board (the registry passes it to clients).
  static constexpr std::string_view kTitle = "Reversi";
  static constexpr std::string_view kDescription =
      "Othello: outflank and turn over the opponent's discs; most discs wins (even sizes 4..16, "
      "rectangles, blocked cells)";
  static constexpr std::string_view kSides[2] = {"Black", "White"};
  // How to type a move, in one line.
  static constexpr std::string_view kNotationHint =
      "a cell such as d3 (a1 is top left), or pass when you must.";
  // How clients draw it (engine/core/board_look.h) and how analysis reads its scores (its
  // fitted curve, win_chance.h beside this file).
  static constexpr BoardLook kLook{.pieces = {{{'X', "●", "1"}, {'O', "○", "1"}}},
                                   .marks = {{{'.', "·", "2;32"}, {'#', "█", "2"}}},
                                   .background = "#1d7a46",
                                   .empty = "#1d7a46",
                                   .lines = "#0d4d2a",
                                   .coordinates = "#ffffff"};
  static constexpr WinChanceCurve kWinChance = kReversiWinChance;
  static constexpr int kMaxSide = 16;
  static constexpr int kMaxCells = kMaxSide * kMaxSide;
  static constexpr Move kPass = 0xfffe;
  static constexpr Move kNoMove = 0xffff;
  // A legal move is an empty cell; a pass is only legal when nothing else is.
  static constexpr int kMaxMoves = kMaxCells;
  static constexpr int kHistorySize = kMaxCells + 1;
  static constexpr bool kPerftCountsFinishedGames = true;

  static absl::StatusOr<Reversi> Create(const GameOptions& options);
  // A position given cell by cell, row by row from a1: 'X' (or 'x', '*', 'B') Black, 'O' (or
  // 'o', 'W') White, '-' (or '.') empty, '#' a wall. Used for test positions (.obf files).
  static absl::StatusOr<Reversi> FromCells(const GameOptions& options, std::string_view cells,
                                           Player to_move);
  static std::vector<OptionInfo> OptionInfos();
  static std::vector<Difficulty> Levels();
  GameOptions EffectiveOptions() const;

  void GenerateMoves(MoveList<Move, kMaxMoves>& moves) const {
    if (!reversi::Any(moves_)) {
      moves.push_back(kPass);
      return;
    }
    reversi::ForEachBit(moves_, [&](int cell) { moves.push_back(static_cast<Move>(cell)); });
  }
  void Make(Move m, UndoInfo& undo);
  void Unmake(Move m, const UndoInfo& undo) {
    side_ ^= 1;
    if (m != kPass) {
      const reversi::Bits256 bit = CellBits(m);
      discs_[side_] ^= undo.flips | bit;
      discs_[side_ ^ 1] ^= undo.flips;
    }
    moves_ = undo.moves;
    hash_ = undo.hash;
    over_ = false;
  }

  Outcome GetOutcome() const {
    if (!over_) return Outcome::kOngoing;
    int diff = DiscDifference();
    return diff > 0 ? Outcome::kWin : diff < 0 ? Outcome::kLoss : Outcome::kDraw;
  }
  GameStatus Status() const;
  Player SideToMove() const { return side_; }

  // Mobility, corners, X- and C-squares next to empty corners, a positional table, edge
  // stability and, near the end, the disc count; from the side to move.
  Score Evaluate() const;
  uint64_t Hash() const { return hash_; }
  uint64_t ComputeHash() const;
  // Corners first, then by the positional table and the opponent's mobility after the move.
  int MoveOrderScore(Move m) const;
  static int HistoryIndex(Move m) { return m == kPass ? kMaxCells : m; }

  std::string MoveToText(Move m) const;
  absl::StatusOr<Move> ParseMove(std::string_view text) const;
  std::string Render() const;

  bool operator==(const Reversi&) const = default;

  // The `hard` and `perfect` levels: the endgame solver (endgame.h) once few enough cells are
  // empty for the budget (PlanSolve), within three fifths of it. The score is the exact final
  // disc difference for the side to move, or, a few cells before the exact solve fits, a
  // proven win (score 1 with `exact` and `outcome_only` set: the outcome is proven, not its
  // margin) or draw (score 0, exact).
  // nullopt when the position is beyond reach; a result without a move (nodes and time spent
  // set) when the solve did not finish or only proved a loss: the caller then searches with
  // what is left of the budget.
  static std::optional<SearchResult<Move>> Solve(Reversi& game, const SearchLimits& limits);
  // How far the solver reaches in a budget: exactly up to `exact_empties` empty cells, for
  // win/loss/draw up to `win_loss_draw_empties`, with the solver's own share of the budget.
  // Only on the standard board do the node counts measured for it apply (endgame.cc).
  struct SolvePlan {
    int exact_empties = 0;
    int win_loss_draw_empties = 0;
    int64_t max_nodes = 0;
    int64_t time_ms = 0;
  };
  static SolvePlan PlanSolve(const SearchLimits& limits, bool standard);
  // The solve plan of `level` at a budget, as text for the ladder's levels fingerprint
  // (registry/ladder_data.h): "exact<=E wld<=W" on the standard board for a level that solves,
  // empty for one that does not. A change of PlanSolve's thresholds changes it.
  static std::string BudgetPlanText(const Difficulty& level, int64_t max_nodes, int64_t time_ms);

  int width() const { return width_; }
  int height() const { return height_; }
  int cells() const { return width_ * height_; }
  // True for boards of at most 64 cells, whose sets live in word 0 of the Bits256 values.
  bool small() const { return small_; }
  bool standard() const { return fast8_; }
  const reversi::Bits256& discs(Player p) const { return discs_[p]; }
  const reversi::Bits256& walls() const { return walls_; }
  // Legal placing moves of the side to move (empty when it must pass).
  const reversi::Bits256& legal_moves() const { return moves_; }
  // Discs of the side to move minus the opponent's.
  int DiscDifference() const {
    return reversi::PopCount(discs_[side_]) - reversi::PopCount(discs_[side_ ^ 1]);
  }
  int Empties() const {
    return cells() - reversi::PopCount(walls_) - reversi::PopCount(discs_[0] | discs_[1]);
  }
  std::string CellName(int cell) const;

 private:
  Reversi(int width, int height, const std::vector<int>& walls);
  static absl::StatusOr<Reversi> CreateEmpty(const GameOptions& options);

  static reversi::Bits256 CellBits(int cell) { return reversi::CellBit<reversi::Bits256>(cell); }
  // The state's sets seen as B: word 0 for small boards, the whole set otherwise.
  template <class B>
  static B& As(reversi::Bits256& b) {
    if constexpr (std::is_same_v<B, uint64_t>) {
      return b.w[0];
    } else {
      return b;
    }
  }
  template <class B>
  static const B& As(const reversi::Bits256& b) {
    if constexpr (std::is_same_v<B, uint64_t>) {
      return b.w[0];
    } else {
      return b;
    }
  }
  template <class B>
  const reversi::Geometry<B>& Geo() const {
    if constexpr (std::is_same_v<B, uint64_t>) {
      return g64_;
    } else {
      return g256_;
    }
  }
  template <class B>
  B MovesOf(const B& own, const B& opp) const;
  template <class B>
  B FlipsOf(const B& own, const B& opp, int cell) const;
  template <class B>
  void MakeT(Move m, UndoInfo& undo);
  template <class B>
  Score EvaluateT() const;
  template <class B>
  int MoveOrderScoreT(Move m) const;
  // Discs of `p` on an edge that hang together with a corner of `p` along that edge: they can
  // never be turned over.
  int EdgeStable(Player p) const;
  // The set of legal moves for the side to move, recomputed from the discs.
  void UpdateMoves();
  bool IsWall(int cell) const { return reversi::Test(walls_, cell); }

  static constexpr int kClasses = 4;

  int width_;
  int height_;
  bool small_;
  bool fast8_;
  uint64_t salt_;
  reversi::Bits256 walls_;
  reversi::Geometry<uint64_t> g64_;
  reversi::Geometry<reversi::Bits256> g256_;
  // The positional table as masks of equal weight (X- and C-squares kept apart: they count
  // only while their corner is empty).
  reversi::Bits256 class_mask_[kClasses];
  int class_weight_[kClasses] = {};
  // Per corner: its cell (-1 when a wall), its X-square and C-squares, and the edge directions
  // (as cell steps) along which stable discs are counted.
  int corner_[4] = {};
  reversi::Bits256 x_square_[4];
  reversi::Bits256 c_squares_[4];
  int edge_step_[4][2] = {};
  int edge_length_[4][2] = {};

  reversi::Bits256 discs_[2];
  reversi::Bits256 moves_;
  uint64_t hash_ = 0;
  Player side_ = 0;
  bool over_ = false;
};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_REVERSI_REVERSI_H_
