// The exact Reversi endgame solver: from a position, the final disc difference with best play by
// both sides, and a move that achieves it. Bots call it once few enough cells are empty (the
// `hard` and `perfect` levels, through Reversi::Solve); `ply-engine solve reversi` and the FFO
// bench call it on test positions.
//
// Score convention: the final disc difference for the side to move, with the empty cells of a
// game that ends early counted for the winner (the World Othello Federation rule, used by the
// FFO test sets). The winner is the same as with a plain disc count.
//
// The standard 8x8 board (with or without walls) has a dedicated bitboard solver: null-window
// tests at the root that narrow the score from a first guess (MTD(f)), principal-variation
// search below on disc difference, a transposition table of score bounds (2 MiB pages where the
// system has them, buckets prefetched a node ahead) with enhanced transposition cutoffs,
// stability cutoffs, move ordering by the opponent's mobility after the move (fastest-first),
// then its potential mobility, our sure-stable corner discs and quadrant parity; with 6 empty
// cells or fewer, parity order alone and hand-written code for the last three cells (the very
// last move only counts flips). Other board shapes use a plain alpha-beta over the game class,
// which is only practical for a dozen or so empty cells.
#ifndef PLY_ENGINE_GAMES_REVERSI_ENDGAME_H_
#define PLY_ENGINE_GAMES_REVERSI_ENDGAME_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/games/reversi/reversi.h"
#include "engine/search/budget.h"

namespace ply::reversi {

// How much a solve finds out: the exact final disc difference, or only whether the side to move
// wins, loses or draws (a few null-window tests around 0; far fewer nodes, so it reaches a few
// more empty cells in the same budget).
enum class SolveKind { kExact, kWinLossDraw };

struct EndgameResult {
  // False when a budget or the stop flag ended the solve; then only `nodes` and `elapsed_ms`
  // mean anything.
  bool solved = false;
  // Final disc difference for the side to move (see the convention above). When
  // `win_loss_draw` is set it is only a bound of the right sign: at least 1 for a win, 0 for a
  // draw, at most -1 for a loss.
  int score = 0;
  bool win_loss_draw = false;
  // A move achieving `score`: a cell, Reversi::kPass, or Reversi::kNoMove if the game is over.
  Reversi::Move best_move = Reversi::kNoMove;
  int64_t nodes = 0;
  double elapsed_ms = 0;

  double nodes_per_second() const { return elapsed_ms > 0 ? nodes * 1000.0 / elapsed_ms : 0; }
};

class EndgameSolver {
 public:
  // The transposition table takes about `tt_megabytes`, allocated here once; Solve does not
  // allocate.
  explicit EndgameSolver(size_t tt_megabytes = 64);
  ~EndgameSolver();
  EndgameSolver(const EndgameSolver&) = delete;
  EndgameSolver& operator=(const EndgameSolver&) = delete;

  // The exact value of `game`. The table is kept between calls (positions of one game solve
  // faster that way); Clear() forgets it.
  // SolveKind::kWinLossDraw stops at the sign of the score (the generic solver of other board
  // shapes always finds the exact score).
  EndgameResult Solve(const Reversi& game, const SearchLimits& limits = {},
                      SolveKind kind = SolveKind::kExact);
  void Clear();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Solves with a solver owned by the calling thread (64 MiB table, kept between calls).
EndgameResult SolveEndgame(const Reversi& game, const SearchLimits& limits = {},
                           SolveKind kind = SolveKind::kExact);

// One line of an .obf test file: 64 cells a1..h8 ('X' Black, 'O' White, '-' empty), the side to
// move, then `;` and moves with their exact scores, best first ("G8:+18; H1:+12;").
struct ObfPosition {
  Reversi game;
  // The exact score of the position (that of the first listed move) and every move that
  // reaches it, in lower case.
  int best_score = 0;
  std::vector<std::string> best_moves;
};
absl::StatusOr<ObfPosition> ParseObfLine(std::string_view line);
// Every position in an .obf file (blank lines and lines starting with '%' or '#' skipped).
absl::StatusOr<std::vector<ObfPosition>> ReadObfFile(const std::string& path);
// The positions of several files, in order; the first file that cannot be read is the error.
absl::StatusOr<std::vector<ObfPosition>> ReadObfFiles(const std::vector<std::string>& paths);

// Solves positions one by one with the table cleared before each, as benchmarks do, and
// writes a table through `out` one line at a time (header, one row per position as it is
// solved, totals): number, empty cells, expected score and move, found score and move (marked
// '!' when wrong), wall time, CPU time, nodes, nodes per second. Rows are numbered from
// `first_number`. This is what `ply-engine solve reversi FILE` and the FFO bench print.
struct ObfTableTotals {
  int positions = 0;
  // Wrong score or a move that is not among the best, and positions stopped by a budget.
  int wrong = 0;
  int unsolved = 0;
  double seconds = 0;
  double cpu_seconds = 0;
  int64_t nodes = 0;
};
ObfTableTotals SolveObfTable(const std::vector<ObfPosition>& positions, int first_number,
                             EndgameSolver& solver, const SearchLimits& limits,
                             const std::function<void(const std::string&)>& out);

}  // namespace ply::reversi

#endif  // PLY_ENGINE_GAMES_REVERSI_ENDGAME_H_
