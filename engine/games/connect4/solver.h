// An exact Connect Four solver: it finds the game-theoretic value of a position, with both sides
// winning as fast and losing as slowly as they can, and a column that achieves it. Bots use it
// to play perfectly once a position is within reach, and tools use it to check the heuristic
// search. Boards from 4x4 up to width * (height + 1) <= 64 bits are supported (7x6 is the
// standard game); the cylinder variant is not.
//
// Positions use the layout of connect4.h: column-major bitboards, height + 1 bits per column with
// an always-empty sentinel bit on top, cell (column c, row r) at bit c * (height + 1) + r, row 0
// at the bottom. A position is given as `current` (stones of the side to move), `mask` (all
// stones) and `moves` (the number of stones on the board).
//
// Score convention, for a board of W x H cells, from the side to move's point of view: 0 for a
// draw; if a player wins by placing a stone when `m` stones were on the board before it, the
// winner scores (W * H + 1 - m) / 2 (integer division) and the loser the negation. The value is
// at least 1 for any win and larger for quicker wins. On 7x6 it equals 22 minus the number of
// stones the winner has placed, the convention of the public benchmark sets.
#ifndef PLY_ENGINE_GAMES_CONNECT4_SOLVER_H_
#define PLY_ENGINE_GAMES_CONNECT4_SOLVER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/search/budget.h"

namespace ply::connect4 {

struct SolveResult {
  // False when a budget or the stop flag ended the search; `score` and `best_column` are then
  // meaningless, and `lower`, `upper` and `lower_column` say what was proved before it stopped.
  bool solved = false;
  int score = 0;
  // A 0-based column achieving `score` for the side to move; -1 when the board is full.
  int best_column = -1;
  // The score lies in [lower, upper] (both `score` when solved); `lower_column`, when not -1,
  // is a column proved to reach at least `lower`.
  int lower = 0;
  int upper = 0;
  int lower_column = -1;
  int64_t nodes = 0;
  double elapsed_ms = 0;
};

// The order of the null-window probes that narrow the score. kFastest usually finds the exact
// score in the fewest nodes (early probes halfway to the extremes). kResultFirst first asks whether
// the side to move wins, then whether it draws: a search stopped on its budget then most often
// still knows a column that keeps the game's result (a win stays a win), if not its fastest one.
// The perfect level plays with kResultFirst.
enum class ProbeOrder { kFastest, kResultFirst };

// The score of a win whose winning stone is placed when `moves` stones are on the board.
constexpr int WinScore(int width, int height, int moves) {
  return (width * height + 1 - moves) / 2;
}

class Solver {
 public:
  // Requires SupportsSize(width, height); aborts otherwise. The transposition table reserves
  // `tt_megabytes` (at least 1 MiB) here, once; each search uses a small region of it first and
  // grows into the rest only as it needs to. Solve never allocates. A Solver is used by one
  // thread at a time.
  explicit Solver(int width = 7, int height = 6, size_t tt_megabytes = 64);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  static bool SupportsSize(int width, int height);
  // Solvers alive in the process (each holds its table), for tests and operators.
  static int Live();

  // The position must be legal (stones stacked from the bottom, `current` a subset of `mask`,
  // `moves` = number of stones) and not already won by the player who just moved. The
  // transposition table is kept between calls; positions of one game solve faster that way.
  SolveResult Solve(uint64_t current, uint64_t mask, int moves, const SearchLimits& limits = {},
                    ProbeOrder order = ProbeOrder::kFastest);

  // Solves the position reached by playing `digits` (1-based columns, one digit each, so widths
  // above 9 cannot be written) from the empty board. Fails on an illegal move or a sequence
  // that contains a win.
  absl::StatusOr<SolveResult> SolveSequence(std::string_view digits,
                                            const SearchLimits& limits = {},
                                            ProbeOrder order = ProbeOrder::kFastest);

  // Forgets everything in the transposition table. Cheap: entries of older generations are
  // ignored, and memory is only wiped now and then, when the small generation counter wraps.
  void Reset();

  int width() const { return width_; }
  int height() const { return height_; }

 private:
  class Engine;

  int width_;
  int height_;
  std::unique_ptr<Engine> engine_;
  static inline std::atomic<int> live_{0};
};

}  // namespace ply::connect4

#endif  // PLY_ENGINE_GAMES_CONNECT4_SOLVER_H_
