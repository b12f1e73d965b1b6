// How the solver works. Positions are two bitboards; the key current + mask is unique. The
// score is found by null-window alpha-beta searches that narrow its possible range, each
// reusing what the earlier ones stored. A node never considers moves that let the opponent
// complete four at once (so a node where that is all we have is scored without a search),
// scores a move whose replies all lose at once without searching it, bounds the score by the
// moves left, and orders the rest by the threats they create, central columns first. The
// transposition table keeps a lower and an upper bound per position; before searching the
// children, their entries are looked up for a cut-off (enhanced transposition cut-off).
#include "engine/games/connect4/solver.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/games/connect4/solver_table.h"

namespace ply::connect4 {
namespace {

// width * (height + 1) <= 64 with height >= 4 leaves at most 12 columns.
constexpr int kMaxWidth = 12;
constexpr int kInfinity = 1000;

constexpr uint64_t BottomRow(int width, int height) {
  uint64_t b = 0;
  for (int c = 0; c < width; ++c) b |= uint64_t{1} << (c * (height + 1));
  return b;
}

constexpr uint64_t Board(int width, int height) {
  return BottomRow(width, height) * ((uint64_t{1} << height) - 1);
}

// Board shape for sizes known only at run time.
struct DynamicGeometry {
  DynamicGeometry(int w, int h)
      : width(w),
        height(h),
        stride(h + 1),
        cells(w * h),
        bottom(BottomRow(w, h)),
        board(Board(w, h)),
        column((uint64_t{1} << h) - 1) {}
  int width;
  int height;
  int stride;
  int cells;
  uint64_t bottom;
  uint64_t board;
  uint64_t column;  // the playable cells of column 0
};

// The standard board with every shift a constant, which the compiler turns into immediates.
struct Geometry7x6 {
  static constexpr int width = 7;
  static constexpr int height = 6;
  static constexpr int stride = 7;
  static constexpr int cells = 42;
  static constexpr uint64_t bottom = BottomRow(7, 6);
  static constexpr uint64_t board = Board(7, 6);
  static constexpr uint64_t column = (uint64_t{1} << 6) - 1;
};

template <class G>
inline uint64_t ColumnMask(const G& g, int col) {
  return g.column << (col * g.stride);
}

// Cells (occupied or not, sentinels excluded) that would complete a four for stones `p`.
template <class G>
inline uint64_t WinningCells(const G& g, uint64_t p) {
  // Vertical: only the cell on top of three stacked stones.
  uint64_t r = (p << 1) & (p << 2) & (p << 3);
  auto line = [&](int s) {
    uint64_t t = (p << s) & (p << 2 * s);
    r |= t & (p << 3 * s);
    r |= t & (p >> s);
    t = (p >> s) & (p >> 2 * s);
    r |= t & (p << s);
    r |= t & (p >> 3 * s);
  };
  line(g.stride);      // horizontal
  line(g.stride - 1);  // diagonal going down to the right
  line(g.stride + 1);  // diagonal going up to the right
  return r & g.board;
}

template <class G>
inline bool HasFour(const G& g, uint64_t p) {
  auto line = [&](int s) {
    const uint64_t pairs = p & (p >> s);
    return (pairs & (pairs >> 2 * s)) != 0;
  };
  return line(1) || line(g.stride) || line(g.stride - 1) || line(g.stride + 1);
}

// After our move `move`, sets `threats` to the empty cells where we would complete four and
// returns the opponent's replies that do not lose at once: the forced block if there is one
// threat, nothing if there are two, and never the cell right under one of our threats. The
// opponent cannot win at once itself when `move` came from such a filtered set.
template <class G>
inline uint64_t SafeReplies(const G& g, uint64_t current, uint64_t mask, uint64_t move,
                            uint64_t& threats) {
  const uint64_t next_mask = mask | move;
  threats = WinningCells(g, current | move) & (g.board ^ next_mask);
  uint64_t replies = (next_mask + g.bottom) & g.board;
  if (const uint64_t forced = replies & threats) replies = (forced & (forced - 1)) ? 0 : forced;
  return replies & ~(threats >> 1);
}

template <class G>
inline int ColumnOf(const G& g, uint64_t cell) {
  return std::countr_zero(cell) / g.stride;
}

using solver_internal::CompactTable;
using solver_internal::WideTable;

}  // namespace

class Solver::Engine {
 public:
  Engine(int width, int height, size_t tt_megabytes) : dynamic_(width, height) {
    const int key_bits = width * (height + 1);
    if (key_bits <= CompactTable::kMaxKeyBits) {
      compact_ = std::make_unique<CompactTable>(tt_megabytes, key_bits);
    } else {
      wide_ = std::make_unique<WideTable>(tt_megabytes, key_bits);
    }
    // Central columns take part in more fours, so they come first among equals.
    for (int i = 0; i < width; ++i) order_[i] = i;
    std::stable_sort(order_, order_ + width, [width](int a, int b) {
      return std::abs(2 * a - (width - 1)) < std::abs(2 * b - (width - 1));
    });
  }

  SolveResult Solve(uint64_t current, uint64_t mask, int moves, const SearchLimits& limits,
                    ProbeOrder order) {
    budget_ = Budget(limits);
    order_of_probes_ = order;
    nodes_ = 0;
    next_check_ = 0;
    aborted_ = false;
    SolveResult r;
    if (wide_ != nullptr) {
      r = SolveWith<DynamicGeometry, WideTable>(current, mask, moves);
    } else if (dynamic_.width == 7 && dynamic_.height == 6) {
      r = SolveWith<Geometry7x6, CompactTable>(current, mask, moves);
    } else {
      r = SolveWith<DynamicGeometry, CompactTable>(current, mask, moves);
    }
    if (r.solved) {
      r.lower = r.upper = r.score;
      r.lower_column = r.best_column;
    }
    r.nodes = nodes_;
    r.elapsed_ms = budget_.ElapsedMs();
    return r;
  }

  void Reset() {
    if (compact_ != nullptr) compact_->Clear();
    if (wide_ != nullptr) wide_->Clear();
  }

  // Plays `digits` from the empty board.
  absl::Status Play(std::string_view digits, uint64_t& current, uint64_t& mask, int& moves) const {
    const DynamicGeometry& g = dynamic_;
    current = mask = 0;
    moves = 0;
    for (char ch : digits) {
      const int col = ch - '1';
      if (ch < '1' || ch > '9' || col >= g.width) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad column '", std::string(1, ch), "' at move ", moves + 1));
      }
      const uint64_t cell = (mask + (g.bottom & ColumnMask(g, col))) & ColumnMask(g, col);
      if (cell == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("column ", col + 1, " is full at move ", moves + 1));
      }
      if (HasFour(g, current | cell)) {
        return absl::InvalidArgumentError(absl::StrCat("move ", moves + 1, " wins the game"));
      }
      current ^= mask;  // the other side is to move
      mask |= cell;
      ++moves;
    }
    return absl::OkStatus();
  }

 private:
  static constexpr int64_t kCheckInterval = 4096;

  // The node budget and the clock, looked at every kCheckInterval nodes (and on the node past
  // the budget). nodes_ already counts the node being entered.
  bool LimitReached() {
    if (budget_.NodesSpent(nodes_ - 1) || budget_.TimeUp()) return true;
    next_check_ = nodes_ + kCheckInterval;
    if (budget_.max_nodes() > 0) next_check_ = std::min(next_check_, budget_.max_nodes() + 1);
    return false;
  }

  template <class G, class Table>
  SolveResult SolveWith(uint64_t current, uint64_t mask, int moves);

  template <class G, class Table, bool kRoot>
  int Negamax(uint64_t current, uint64_t mask, int moves, int alpha, int beta, uint64_t opp_wins,
              uint64_t possible);

  // The board shape and table a search instance uses: the 7x6 shape is a compile-time
  // constant.
  template <class G>
  const G& geometry() const {
    if constexpr (std::is_same_v<G, DynamicGeometry>) {
      return dynamic_;
    } else {
      static constexpr G kGeometry{};
      return kGeometry;
    }
  }
  template <class Table>
  Table& table() {
    if constexpr (std::is_same_v<Table, CompactTable>) {
      return *compact_;
    } else {
      return *wide_;
    }
  }

  DynamicGeometry dynamic_;
  std::unique_ptr<CompactTable> compact_;
  std::unique_ptr<WideTable> wide_;
  int order_[kMaxWidth];

  int64_t nodes_ = 0;
  int64_t next_check_ = 0;
  // Its stop flag is read at every node.
  Budget budget_;
  bool aborted_ = false;
  int root_column_ = -1;
  ProbeOrder order_of_probes_ = ProbeOrder::kFastest;
};

// Negamax with alpha-beta, fail-soft: a result <= alpha is an upper bound, >= beta a lower bound,
// otherwise exact. The caller has already worked out `opp_wins`, the empty cells where the
// opponent would complete four, and `possible`, our moves that do not let the opponent win at
// once (never empty: the caller scores such a position itself). Precondition: the side to move
// cannot win with this stone.
template <class G, class Table, bool kRoot>
int Solver::Engine::Negamax(uint64_t current, uint64_t mask, int moves, int alpha, int beta,
                            uint64_t opp_wins, uint64_t possible) {
  const G& g = geometry<G>();
  Table& tt = table<Table>();
  if (budget_.StopRaised() || (++nodes_ >= next_check_ && LimitReached())) {
    aborted_ = true;
    return 0;
  }
  const int cells = g.cells;
  const int64_t first_node = nodes_;
  // Neither side can win with its next stone, and then the board is full.
  if (moves >= cells - 2) return 0;
  const uint64_t opponent = current ^ mask;

  // We cannot win with this stone nor the opponent with its next one.
  const int max_score = (cells - 1 - moves) / 2;
  int lo = -(cells - 2 - moves) / 2;
  int hi = max_score;

  const uint64_t key = current + mask;
  // The children's entries are read below for cut-offs; start those loads now so that they
  // overlap with this node's probe and the move scoring.
  for (uint64_t rest = possible; rest != 0; rest &= rest - 1) {
    tt.Prefetch(opponent + (mask | (rest & -rest)));
  }
  if (int tt_lower, tt_upper; tt.Find(key, tt_lower, tt_upper)) {
    lo = std::max(lo, tt_lower);
    hi = std::min(hi, tt_upper);
  }
  // The root's own entry ends no probe there: each probe that beats alpha must name its column
  // (a stopped solve plays it), and the children's entries, read below, usually settle it at
  // once when the root's bound came from them.
  if constexpr (!kRoot) {
    if (lo >= hi || lo >= beta) return lo;
    if (hi <= alpha) return hi;
    alpha = std::max(alpha, lo);
    beta = std::min(beta, hi);
  }
  const int alpha0 = alpha;

  int best = -kInfinity;
  int best_column = -1;
  // Children in the order generated (central columns first), and their search order.
  uint64_t child_moves[kMaxWidth];
  uint64_t child_threats[kMaxWidth];
  uint64_t child_replies[kMaxWidth];
  int child_columns[kMaxWidth];
  int sorted[kMaxWidth];
  int n = 0;
  for (int i = 0; i < g.width; ++i) {
    const int col = order_[i];
    const uint64_t move = possible & ColumnMask(g, col);
    if (move == 0) continue;
    uint64_t my_wins;
    const uint64_t replies = SafeReplies(g, current, mask, move, my_wins);
    // If the opponent has no reply that survives our next stone, this move wins as fast as
    // anything can.
    if (replies == 0) {
      best = max_score;
      best_column = col;
      goto done;
    }
    // Enhanced transposition cut-off: a child already known to be bad enough for the opponent
    // ends the search here, and one known not to beat alpha needs no search.
    if (int child_lower, child_upper; tt.Find(opponent + (mask | move), child_lower, child_upper)) {
      if (-child_upper >= beta) {
        best = -child_upper;
        best_column = col;
        goto done;
      }
      if (-child_lower <= alpha) {
        best = std::max(best, -child_lower);
        continue;
      }
    }
    // Order by the threats we would own; one right above an opponent's threat is worthless, as
    // the cell below it is never played. Ties keep the central columns first.
    const int score = std::popcount(my_wins & ~(opp_wins << 1)) * 16 + (kMaxWidth - n);
    child_moves[n] = move;
    child_threats[n] = my_wins;
    child_replies[n] = replies;
    child_columns[n] = col;
    int j = n++;
    while (j > 0 && sorted[j - 1] < score) {
      sorted[j] = sorted[j - 1];
      --j;
    }
    sorted[j] = score;
  }
  // No move wins with our next stone, so none scores more than a win with the one after.
  if (const int bound = (cells - 3 - moves) / 2; bound <= alpha) {
    best = std::max(best, bound);
    n = 0;
  }
  for (int i = 0; i < n; ++i) {
    const int c = kMaxWidth - sorted[i] % 16;
    const int v = -Negamax<G, Table, false>(opponent, mask | child_moves[c], moves + 1, -beta,
                                            -alpha, child_threats[c], child_replies[c]);
    if (aborted_) return 0;
    if (v > best) {
      best = v;
      best_column = child_columns[c];
      if (v >= beta) break;
      if (v > alpha) alpha = v;
    }
  }

done:
  if constexpr (kRoot) root_column_ = best > alpha0 ? best_column : -1;
  // What this result cost, on a log scale: the table keeps the dearest entries.
  const int work = std::bit_width(static_cast<uint64_t>(nodes_ - first_node));
  if (best >= beta) {
    tt.Store(key, best, hi, work);
  } else if (best <= alpha0) {
    tt.Store(key, lo, best, work);
  } else {
    tt.Store(key, best, best, work);
  }
  return best;
}

template <class G, class Table>
SolveResult Solver::Engine::SolveWith(uint64_t current, uint64_t mask, int moves) {
  const G& g = geometry<G>();
  SolveResult r;
  const int cells = g.cells;
  if (moves >= cells) {
    r.solved = true;
    return r;
  }
  ++nodes_;
  const uint64_t opponent = current ^ mask;
  const uint64_t possible = (mask + g.bottom) & g.board;
  if (const uint64_t wins = WinningCells(g, current) & possible) {
    r.solved = true;
    r.score = WinScore(g.width, g.height, moves);
    r.best_column = ColumnOf(g, wins & -wins);
    return r;
  }
  auto first_in_order = [&](uint64_t cells_set) {
    for (int i = 0; i < g.width; ++i) {
      if (cells_set & ColumnMask(g, order_[i])) return order_[i];
    }
    return -1;
  };
  const uint64_t opp_wins = WinningCells(g, opponent) & (g.board ^ mask);
  uint64_t non_losing = possible;
  if (const uint64_t forced = possible & opp_wins)
    non_losing = (forced & (forced - 1)) ? 0 : forced;
  non_losing &= ~(opp_wins >> 1);
  if (non_losing == 0) {
    // Lost on the opponent's next stone whatever we do; block a threat at least.
    r.solved = true;
    r.score = -(cells - moves) / 2;
    r.best_column = first_in_order((possible & opp_wins) != 0 ? possible & opp_wins : possible);
    return r;
  }
  if (moves >= cells - 2) {
    r.solved = true;
    r.best_column = first_in_order(non_losing);
    return r;
  }

  // Null-window searches narrow [min, max] to the exact score. Early probes go halfway towards
  // the extremes, where a wrong guess is refuted cheaply (the side to move's wins first, which
  // measured slightly better); the last ones close in by bisection.
  int min = -(cells - 2 - moves) / 2;
  int max = (cells - 1 - moves) / 2;
  // best_column is proved to reach min: a probe that beats its window names the root's column
  // that did (the root never returns on its own table entry), and min only rises on such a probe.
  int best_column = -1;
  // What a stopped solve proved: the score's bounds, and the column known to reach the lower.
  auto stopped = [&](int upper) {
    r.lower = min;
    r.upper = upper;
    r.lower_column = best_column;
    return r;
  };
  while (min < max) {
    int med = min + (max - min) / 2;
    // Whether the result (win, draw or loss) is known: with kResultFirst, ask "a win?" (is the
    // score above 0) and then "a draw?" (above -1) before anything else.
    const bool result_known = min > 0 || max < 0;
    if (order_of_probes_ == ProbeOrder::kResultFirst && !result_known) {
      med = max > 0 ? 0 : -1;
    } else if (med >= 0 && max / 2 > med) {
      med = max / 2;
    } else if (med <= 0 && min / 2 < med) {
      med = min / 2;
    }
    root_column_ = -1;
    const int v = Negamax<G, Table, true>(current, mask, moves, med, med + 1, opp_wins, non_losing);
    if (aborted_) return stopped(max);
    if (v <= med) {
      max = v;
    } else {
      min = v;
      best_column = root_column_;
    }
  }
  if (best_column < 0) {
    // No probe beat its window: the side to move loses as fast as it can. Any move that does
    // not lose sooner reaches that score.
    for (int i = 0; i < g.width && best_column < 0; ++i) {
      const uint64_t move = non_losing & ColumnMask(g, order_[i]);
      if (move == 0) continue;
      uint64_t threats;
      const uint64_t replies = SafeReplies(g, current, mask, move, threats);
      const int v = replies == 0 ? (cells - 1 - moves) / 2
                                 : -Negamax<G, Table, false>(opponent, mask | move, moves + 1, -min,
                                                             -min + 1, threats, replies);
      if (aborted_) return stopped(min);
      if (v >= min) best_column = order_[i];
    }
  }
  r.solved = true;
  r.score = min;
  r.best_column = best_column;
  return r;
}

Solver::Solver(int width, int height, size_t tt_megabytes) : width_(width), height_(height) {
  if (!SupportsSize(width, height)) {
    std::fprintf(stderr, "connect4 solver: unsupported board %dx%d\n", width, height);
    std::abort();
  }
  engine_ = std::make_unique<Engine>(width, height, tt_megabytes);
  live_.fetch_add(1, std::memory_order_relaxed);
}

Solver::~Solver() { live_.fetch_sub(1, std::memory_order_relaxed); }

int Solver::Live() { return live_.load(std::memory_order_relaxed); }

bool Solver::SupportsSize(int width, int height) {
  return width >= 4 && height >= 4 && width * (height + 1) <= 64;
}

SolveResult Solver::Solve(uint64_t current, uint64_t mask, int moves, const SearchLimits& limits,
                          ProbeOrder order) {
  return engine_->Solve(current, mask, moves, limits, order);
}

absl::StatusOr<SolveResult> Solver::SolveSequence(std::string_view digits,
                                                  const SearchLimits& limits, ProbeOrder order) {
  uint64_t current, mask;
  int moves;
  if (absl::Status s = engine_->Play(digits, current, mask, moves); !s.ok()) return s;
  return engine_->Solve(current, mask, moves, limits, order);
}

void Solver::Reset() { engine_->Reset(); }

}  // namespace ply::connect4
