#include "engine/games/reversi/endgame.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/core/random.h"
#include "engine/core/text.h"
#include "engine/games/reversi/bitboard8.h"

namespace ply::reversi {
namespace {

constexpr int kInf = 127;
constexpr uint64_t kCorners = 0x8100000000000081ULL;
// Quadrants for the parity heuristic: in a region with an odd number of empty cells, the side
// to move can usually take the last cell.
constexpr uint64_t kQuadrants[4] = {0x000000000f0f0f0fULL, 0x00000000f0f0f0f0ULL,
                                    0x0f0f0f0f00000000ULL, 0xf0f0f0f000000000ULL};
// With this many empty cells or fewer the solver orders moves by parity only (no mobility
// counts, no table); above it uses the full ordering.
constexpr int kShallowEmpties = 6;
// Positions with at least this many empty cells go into the transposition table, in buckets of
// two entries.
constexpr int kTableEmpties = 8;
// Above this many empty cells a node first looks up its children in the table.
constexpr int kEtcEmpties = 10;

uint64_t OddQuadrants(uint64_t empty) {
  uint64_t odd = 0;
  for (uint64_t q : kQuadrants) {
    if (std::popcount(empty & q) & 1) odd |= q;
  }
  return odd;
}

constexpr uint64_t kColumnA = 0x0101010101010101ULL;
constexpr uint64_t kColumnH = 0x8080808080808080ULL;
constexpr uint64_t kRow1 = 0xffULL;
constexpr uint64_t kRow8 = 0xff00000000000000ULL;
constexpr uint64_t kBorder = kColumnA | kColumnH | kRow1 | kRow8;

struct Diagonals {
  uint64_t down[15];  // a1-h8 direction (step +9)
  uint64_t up[15];    // h1-a8 direction (step +7)
};
constexpr Diagonals MakeDiagonals() {
  Diagonals d{};
  for (int sq = 0; sq < 64; ++sq) {
    const int r = sq / 8, c = sq % 8;
    d.down[r - c + 7] |= uint64_t{1} << sq;
    d.up[r + c] |= uint64_t{1} << sq;
  }
  return d;
}
constexpr Diagonals kDiagonals = MakeDiagonals();

// Discs of `own` that can never be turned over: along each of the four axes the line is full, or
// a neighbour on the axis is the edge, a wall or another such disc. `filled` holds the discs of
// both sides and the walls.
uint64_t StableDiscs(uint64_t own, uint64_t filled, uint64_t walls) {
  uint64_t full_h = 0, full_d9 = 0, full_d7 = 0;
  for (int r = 0; r < 8; ++r) {
    const uint64_t row = kRow1 << (8 * r);
    if ((filled & row) == row) full_h |= row;
  }
  uint64_t columns = filled;
  columns &= columns >> 32;
  columns &= columns >> 16;
  columns &= columns >> 8;
  const uint64_t full_v = (columns & kRow1) * kColumnA;
  for (int i = 0; i < 15; ++i) {
    if ((filled & kDiagonals.down[i]) == kDiagonals.down[i]) full_d9 |= kDiagonals.down[i];
    if ((filled & kDiagonals.up[i]) == kDiagonals.up[i]) full_d7 |= kDiagonals.up[i];
  }
  const uint64_t base_h =
      full_h | kColumnA | kColumnH | ((walls << 1) & ~kColumnA) | ((walls >> 1) & ~kColumnH);
  const uint64_t base_v = full_v | kRow1 | kRow8 | (walls << 8) | (walls >> 8);
  const uint64_t base_d9 =
      full_d9 | kBorder | ((walls << 9) & ~kColumnA) | ((walls >> 9) & ~kColumnH);
  const uint64_t base_d7 =
      full_d7 | kBorder | ((walls << 7) & ~kColumnH) | ((walls >> 7) & ~kColumnA);
  uint64_t stable = 0;
  while (true) {
    const uint64_t h = base_h | ((stable << 1) & ~kColumnA) | ((stable >> 1) & ~kColumnH);
    const uint64_t v = base_v | (stable << 8) | (stable >> 8);
    const uint64_t d9 = base_d9 | ((stable << 9) & ~kColumnA) | ((stable >> 9) & ~kColumnH);
    const uint64_t d7 = base_d7 | ((stable << 7) & ~kColumnH) | ((stable >> 7) & ~kColumnA);
    const uint64_t next = own & h & v & d9 & d7;
    if (next == stable) return stable;
    stable = next;
  }
}

// The up to eight cells around each cell: a move flips nothing unless one of them is the
// opponent's, a test far cheaper than computing the flips.
constexpr std::array<uint64_t, 64> MakeNeighbours() {
  std::array<uint64_t, 64> n{};
  for (int sq = 0; sq < 64; ++sq) {
    for (int dr = -1; dr <= 1; ++dr) {
      for (int dc = -1; dc <= 1; ++dc) {
        const int r = sq / 8 + dr, c = sq % 8 + dc;
        if ((dr != 0 || dc != 0) && r >= 0 && r < 8 && c >= 0 && c < 8) {
          n[sq] |= uint64_t{1} << (r * 8 + c);
        }
      }
    }
  }
  return n;
}
constexpr std::array<uint64_t, 64> kNeighbours = MakeNeighbours();

// Flips of a move of `own` on `cell`, 0 when illegal.
inline uint64_t FlipsIfAny(uint64_t own, uint64_t opp, int cell) {
  return (kNeighbours[cell] & opp) ? reversi8::Flips(own, opp, cell) : 0;
}

// The cells next to a disc of `discs` in any of the eight directions (including occupied ones).
inline uint64_t Around(uint64_t discs) {
  const uint64_t sideways = ((discs << 1) & ~kColumnA) | ((discs >> 1) & ~kColumnH);
  const uint64_t row = discs | sideways;
  return sideways | (row << 8) | (row >> 8);
}

// Corners of `own` and the edge cells next to them that `own` also holds: discs that are stable
// for sure, a cheap proxy for stability in move ordering.
inline int CornerStability(uint64_t own) {
  const uint64_t corners = own & kCorners;
  const uint64_t next =
      ((corners << 1) & ~kColumnA) | ((corners >> 1) & ~kColumnH) | (corners << 8) | (corners >> 8);
  return std::popcount(corners | (next & own));
}

// Final score with `empties` cells left: the winner gets them.
int FinalScore(uint64_t own, uint64_t opp, int empties) {
  const int diff = std::popcount(own) - std::popcount(opp);
  return diff > 0 ? diff + empties : diff < 0 ? diff - empties : 0;
}

}  // namespace

class EndgameSolver::Impl {
 public:
  explicit Impl(size_t tt_megabytes) {
    size_t entries = 1;
    while (entries * 2 * sizeof(Entry) <= (std::max<size_t>(tt_megabytes, 1) << 20)) entries *= 2;
    // Aligned to 2 MiB and marked for transparent huge pages where the system has them: the
    // probes land anywhere in the table, and with 4 KiB pages nearly every one also misses
    // the TLB.
    const size_t bytes = entries * sizeof(Entry);
    const size_t align = bytes >= kHugePage ? kHugePage : alignof(Entry);
    table_.reset(static_cast<Entry*>(std::aligned_alloc(align, bytes)));
    if (table_ == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    if (align == kHugePage) madvise(table_.get(), bytes, MADV_HUGEPAGE);
#endif
    mask_ = entries - 1;
    Clear();
  }

  void Clear() { std::memset(static_cast<void*>(table_.get()), 0, (mask_ + 1) * sizeof(Entry)); }

  EndgameResult Solve(uint64_t own, uint64_t opp, uint64_t board, const SearchLimits& limits,
                      SolveKind kind) {
    budget_ = Budget(limits);
    nodes_ = 0;
    next_check_ = 0;
    stopped_ = false;
    walls_ = ~board;
    cells_ = std::popcount(board);
    EndgameResult result;
    const uint64_t empty = board & ~(own | opp);
    const int n = std::popcount(empty);
    uint64_t moves = reversi8::Moves(own, opp, empty);
    if (moves == 0) {
      if (reversi8::Moves(opp, own, empty) == 0) {
        result.score = FinalScore(own, opp, n);
        result.best_move = Reversi::kNoMove;
      } else {
        result.score = -Search(opp, own, empty, n, -kInf, kInf);
        result.best_move = Reversi::kPass;
      }
    } else {
      // Null-window tests from a first guess, each narrowing [lower, upper] on the score
      // (MTD(f)): every test is a cheap search that the table speeds up for the next one.
      int lower = -kInf, upper = kInf;
      int guess = 0;
      int root_move = NoMove(), best_move = NoMove();
      // Win/loss/draw: the tests stop once the sign of the score is known (at most two: > 0,
      // then >= 0), each much cheaper than narrowing the score to its value.
      const auto sign_known = [&] {
        return kind == SolveKind::kWinLossDraw &&
               (lower > 0 || upper < 0 || (lower == 0 && upper == 0));
      };
      if (kind == SolveKind::kWinLossDraw) guess = 1;
      while (lower < upper && !stopped_ && !sign_known()) {
        const int beta = guess == lower ? guess + 1 : guess;
        int move = root_move;
        const int v = Root(own, opp, empty, n, moves, beta - 1, beta, &move);
        if (stopped_) break;
        // The move of the best score so far goes first in the next test.
        root_move = move;
        if (v >= beta) {
          lower = v;
          best_move = move;
        } else {
          upper = v;
        }
        guess = kind == SolveKind::kWinLossDraw ? (v > 0 ? 1 : 0) : v;
      }
      if (best_move == NoMove()) best_move = root_move;
      if (best_move != NoMove()) result.best_move = static_cast<Reversi::Move>(best_move);
      // A loss found by the win/loss/draw tests has only an upper bound.
      result.score = lower > -kInf ? lower : upper;
      result.win_loss_draw = kind == SolveKind::kWinLossDraw && lower < upper;
    }
    result.solved = !stopped_;
    result.nodes = nodes_;
    result.elapsed_ms = budget_.ElapsedMs();
    return result;
  }

 private:
  struct Entry {
    uint64_t key;
    int8_t lower;
    int8_t upper;
    uint8_t move;
    uint8_t empties;
  };
  struct MoveEntry {
    int cell;
    int key;
    uint64_t flips;
  };

  static constexpr int NoMove() { return 64; }

  static uint64_t Key(uint64_t own, uint64_t opp) { return Mix64(own ^ Mix64(opp)); }

  const Entry* Probe(uint64_t own, uint64_t opp) const {
    const uint64_t key = Key(own, opp);
    const Entry* bucket = &table_.get()[key & mask_ & ~size_t{1}];
    return bucket[0].key == key ? &bucket[0] : bucket[1].key == key ? &bucket[1] : nullptr;
  }

  void Prefetch(uint64_t own, uint64_t opp) const {
    __builtin_prefetch(&table_.get()[Key(own, opp) & mask_ & ~size_t{1}]);
  }

  bool CheckStop() { return budget_.Exhausted(nodes_); }

  // Fills `list` with the moves in `moves` and their ordering keys: the table move first, then
  // few replies for the opponent (corners counted twice), then odd quadrants.
  int ListMoves(uint64_t own, uint64_t opp, uint64_t empty, uint64_t moves, int tt_move,
                MoveEntry* list) const {
    const uint64_t odd = OddQuadrants(empty);
    int count = 0;
    for (; moves != 0; moves &= moves - 1) {
      const int cell = std::countr_zero(moves);
      const uint64_t bit = uint64_t{1} << cell;
      const uint64_t flips = reversi8::Flips(own, opp, cell);
      const uint64_t next_own = own | flips | bit;
      const uint64_t replies = reversi8::Moves(opp ^ flips, next_own, empty ^ bit);
      int key = -(1 << 12) * (std::popcount(replies) + std::popcount(replies & kCorners));
      key -= 256 * std::popcount(Around(next_own) & (empty ^ bit));
      key += 128 * CornerStability(next_own);
      if (bit & odd) key += 32;
      if (bit & kCorners) key += 48;
      if (cell == tt_move) key = 1 << 20;
      list[count++] = {cell, key, flips};
    }
    return count;
  }

  static void PickBest(MoveEntry* list, int i, int count) {
    int best = i;
    for (int j = i + 1; j < count; ++j) {
      if (list[j].key > list[best].key) best = j;
    }
    if (best != i) std::swap(list[i], list[best]);
  }

  // The root: principal-variation search in the window (alpha, beta), fail-soft. `best_move`
  // is tried first, then gets the move of the best score.
  // The score of move `m` for the side to move: the first move with the whole window, the others
  // with a null window first and again with the whole window when they beat alpha (PVS).
  int SearchMove(uint64_t own, uint64_t opp, uint64_t empty, int n, const MoveEntry& m, bool first,
                 int alpha, int beta) {
    const uint64_t bit = uint64_t{1} << m.cell;
    const uint64_t next_own = opp ^ m.flips, next_opp = own | m.flips | bit;
    if (first) return -Search(next_own, next_opp, empty ^ bit, n - 1, -beta, -alpha);
    int score = -Search(next_own, next_opp, empty ^ bit, n - 1, -alpha - 1, -alpha);
    if (score > alpha && score < beta && !stopped_) {
      score = -Search(next_own, next_opp, empty ^ bit, n - 1, -beta, -alpha);
    }
    return score;
  }

  int Root(uint64_t own, uint64_t opp, uint64_t empty, int n, uint64_t moves, int alpha, int beta,
           int* best_move) {
    MoveEntry list[32];
    const int count = ListMoves(own, opp, empty, moves, *best_move, list);
    int best = -kInf;
    for (int i = 0; i < count; ++i) {
      PickBest(list, i, count);
      const MoveEntry& m = list[i];
      const int score = SearchMove(own, opp, empty, n, m, /*first=*/i == 0, alpha, beta);
      if (stopped_) return 0;
      if (score > best) {
        best = score;
        *best_move = m.cell;
        if (score > alpha) {
          alpha = score;
          if (alpha >= beta) break;
        }
      }
    }
    return best;
  }

  // The one empty cell `cell` is all that is left.
  int Last1(uint64_t own, uint64_t opp, int cell) {
    ++nodes_;
    const int diff = std::popcount(own) - std::popcount(opp);
#if PLY_REVERSI_PEXT
    if (walls_ == 0) {
      if (const int k = reversi8::CountLastFlips(own, cell)) return diff + 2 * k + 1;
      if (const int k = reversi8::CountLastFlips(opp, cell)) return diff - 2 * k - 1;
      return diff > 0 ? diff + 1 : diff < 0 ? diff - 1 : 0;
    }
#endif
    if (const uint64_t flips = FlipsIfAny(own, opp, cell)) {
      return diff + 2 * std::popcount(flips) + 1;
    }
    if (const uint64_t flips = FlipsIfAny(opp, own, cell)) {
      return diff - 2 * std::popcount(flips) - 1;
    }
    return diff > 0 ? diff + 1 : diff < 0 ? diff - 1 : 0;
  }

  // Two empty cells, `a` and `b`: each move is tried directly, without move generation. Only
  // `beta` matters (the first move either cuts or the second decides).
  int Last2(uint64_t own, uint64_t opp, int a, int b, int beta) {
    ++nodes_;
    const uint64_t bit_a = uint64_t{1} << a, bit_b = uint64_t{1} << b;
    int best = -kInf;
    if (const uint64_t flips = FlipsIfAny(own, opp, a)) {
      best = -Last1(opp ^ flips, own | flips | bit_a, b);
      if (best >= beta) return best;
    }
    if (const uint64_t flips = FlipsIfAny(own, opp, b)) {
      return std::max(best, -Last1(opp ^ flips, own | flips | bit_b, a));
    }
    if (best != -kInf) return best;
    // No move: the opponent plays if it can (the lower of its results for us), else the game
    // is over.
    int worst = kInf;
    if (const uint64_t flips = FlipsIfAny(opp, own, a)) {
      worst = Last1(own ^ flips, opp | flips | bit_a, b);
    }
    if (const uint64_t flips = FlipsIfAny(opp, own, b)) {
      worst = std::min(worst, Last1(own ^ flips, opp | flips | bit_b, a));
    }
    return worst != kInf ? worst : FinalScore(own, opp, 2);
  }

  // Three empty cells: a cell alone in its quadrant first (parity), each move tried directly.
  int Last3(uint64_t own, uint64_t opp, uint64_t empty, int alpha, int beta) {
    ++nodes_;
    int x = std::countr_zero(empty);
    int z = 63 - std::countl_zero(empty);
    int y = std::countr_zero(empty & ~(uint64_t{1} << x) & ~(uint64_t{1} << z));
    const auto quadrant = [](int cell) { return (cell & 4) | (cell & 32); };
    if (quadrant(x) == quadrant(y)) {
      std::swap(x, z);  // z is alone
    } else if (quadrant(x) == quadrant(z)) {
      std::swap(x, y);  // y is alone
    }
    const int order[3][3] = {{x, y, z}, {y, x, z}, {z, x, y}};
    int best = -kInf;
    for (const auto& o : order) {
      const uint64_t flips = FlipsIfAny(own, opp, o[0]);
      if (flips == 0) continue;
      const int score = -Last2(opp ^ flips, own | flips | (uint64_t{1} << o[0]), o[1], o[2],
                               -std::max(alpha, best));
      if (score > best) {
        best = score;
        if (best >= beta) return best;
      }
    }
    if (best == -kInf) {
      if (reversi8::Moves(opp, own, empty) == 0) return FinalScore(own, opp, 3);
      return -Last3(opp, own, empty, -beta, -alpha);
    }
    return best;
  }

  // Few empty cells: no move generation or table, cells in odd quadrants first.
  int Shallow(uint64_t own, uint64_t opp, uint64_t empty, int n, int alpha, int beta) {
    if (n <= 3) {
      if (n == 3) return Last3(own, opp, empty, alpha, beta);
      if (n == 1) return Last1(own, opp, std::countr_zero(empty));
      return Last2(own, opp, std::countr_zero(empty), 63 - std::countl_zero(empty), beta);
    }
    ++nodes_;
    if (n >= 5 && alpha >= 2 * n - 8 && cells_ - 2 * std::popcount(opp) <= alpha) {
      const int bound = cells_ - 2 * std::popcount(StableDiscs(opp, ~empty, walls_));
      if (bound <= alpha) return bound;
    }
    int best = -kInf;
    const uint64_t odd = OddQuadrants(empty);
    for (uint64_t group : {empty & odd, empty & ~odd}) {
      for (; group != 0; group &= group - 1) {
        const int cell = std::countr_zero(group);
        const uint64_t flips = FlipsIfAny(own, opp, cell);
        if (flips == 0) continue;
        const uint64_t bit = uint64_t{1} << cell;
        const int score = -Shallow(opp ^ flips, own | flips | bit, empty ^ bit, n - 1, -beta,
                                   -std::max(alpha, best));
        if (score > best) {
          best = score;
          if (best >= beta) return best;
        }
      }
    }
    if (best == -kInf) {
      if (reversi8::Moves(opp, own, empty) == 0) return FinalScore(own, opp, n);
      return -Shallow(opp, own, empty, n, -beta, -alpha);
    }
    return best;
  }

  int Search(uint64_t own, uint64_t opp, uint64_t empty, int n, int alpha, int beta) {
    if (n <= kShallowEmpties) return Shallow(own, opp, empty, n, alpha, beta);
    ++nodes_;
    // Every 4096 nodes or so (the shallow search below counts its nodes too, so nodes_ does
    // not pass every multiple here).
    if (nodes_ >= next_check_) {
      next_check_ = nodes_ + 4096;
      if (CheckStop()) stopped_ = true;
    }
    if (stopped_) return 0;

    // Stability cutoff: the opponent's stable discs bound what we can still reach.
    if (alpha >= 2 * n - 8 && cells_ - 2 * std::popcount(opp) <= alpha) {
      const int bound = cells_ - 2 * std::popcount(StableDiscs(opp, ~empty, walls_));
      if (bound <= alpha) return bound;
    }

    const uint64_t moves = reversi8::Moves(own, opp, empty);
    if (moves == 0) {
      if (reversi8::Moves(opp, own, empty) == 0) return FinalScore(own, opp, n);
      return -Search(opp, own, empty, n, -beta, -alpha);
    }

    int tt_move = NoMove();
    Entry* bucket = nullptr;
    Entry* entry = nullptr;
    uint64_t key = 0;
    if (n >= kTableEmpties) {
      key = Key(own, opp);
      bucket = &table_.get()[key & mask_ & ~size_t{1}];
      entry = bucket[0].key == key ? &bucket[0] : bucket[1].key == key ? &bucket[1] : nullptr;
      if (entry != nullptr) {
        if (entry->lower >= beta) return entry->lower;
        if (entry->upper <= alpha) return entry->upper;
        alpha = std::max<int>(alpha, entry->lower);
        beta = std::min<int>(beta, entry->upper);
        tt_move = entry->move;
      }
    }

    MoveEntry list[32];
    const int count = ListMoves(own, opp, empty, moves, tt_move, list);
    // The children's table buckets are fetched from memory all at once, ahead of their use
    // here (enhanced transposition cutoff) or in the children themselves.
    if (n > kTableEmpties) {
      for (int i = 0; i < count; ++i) {
        const uint64_t bit = uint64_t{1} << list[i].cell;
        Prefetch(opp ^ list[i].flips, own | list[i].flips | bit);
      }
    }
    // Enhanced transposition cutoff: a reply already known to refute the opponent ends the
    // node without searching anything.
    if (n > kEtcEmpties) {
      for (int i = 0; i < count; ++i) {
        const uint64_t bit = uint64_t{1} << list[i].cell;
        const Entry* child = Probe(opp ^ list[i].flips, own | list[i].flips | bit);
        if (child != nullptr && -child->upper >= beta) return -child->upper;
      }
    }
    const int alpha_orig = alpha;
    int best = -kInf;
    int best_move = NoMove();
    for (int i = 0; i < count; ++i) {
      PickBest(list, i, count);
      const MoveEntry& m = list[i];
      const int score = SearchMove(own, opp, empty, n, m, /*first=*/i == 0, alpha, beta);
      if (stopped_) return 0;
      if (score > best) {
        best = score;
        best_move = m.cell;
        if (score > alpha) {
          alpha = score;
          if (alpha >= beta) break;
        }
      }
    }

    if (bucket != nullptr) {
      // Bounds against the window this node was searched with (after the table narrowed it),
      // merged with what the table knew. A new position goes to the first slot of its bucket
      // if it took at least as much work as the one there (it has as many empty cells), else
      // to the second slot, which always takes the newest.
      Entry e{key, static_cast<int8_t>(-64), static_cast<int8_t>(64),
              static_cast<uint8_t>(best_move), static_cast<uint8_t>(n)};
      if (entry != nullptr) {
        e.lower = entry->lower;
        e.upper = entry->upper;
      } else {
        entry = n >= bucket[0].empties ? &bucket[0] : &bucket[1];
      }
      if (best >= beta) {
        e.lower = static_cast<int8_t>(std::max<int>(e.lower, best));
      } else if (best > alpha_orig) {
        e.lower = e.upper = static_cast<int8_t>(best);
      } else {
        e.upper = static_cast<int8_t>(std::min<int>(e.upper, best));
      }
      *entry = e;
    }
    return best;
  }

  static constexpr size_t kHugePage = size_t{2} << 20;
  struct Free {
    void operator()(Entry* p) const { std::free(p); }
  };
  std::unique_ptr<Entry, Free> table_;
  size_t mask_ = 0;
  Budget budget_;
  int64_t nodes_ = 0;
  int64_t next_check_ = 0;
  bool stopped_ = false;
  uint64_t walls_ = 0;
  int cells_ = 64;
};

EndgameSolver::EndgameSolver(size_t tt_megabytes) : impl_(std::make_unique<Impl>(tt_megabytes)) {}
EndgameSolver::~EndgameSolver() = default;
void EndgameSolver::Clear() { impl_->Clear(); }

namespace {

// Plain alpha-beta over the game class for boards other than 8x8.
struct GenericSolver {
  Budget budget;
  int64_t nodes = 0;
  bool stopped = false;

  int Final(const Reversi& g) const {
    const int diff = g.DiscDifference();
    return diff > 0 ? diff + g.Empties() : diff < 0 ? diff - g.Empties() : 0;
  }

  int Search(Reversi& g, int alpha, int beta, Reversi::Move* best_move) {
    ++nodes;
    if ((nodes & 1023) == 0 && budget.Exhausted(nodes)) stopped = true;
    if (stopped) return 0;
    if (g.GetOutcome() != Outcome::kOngoing) return Final(g);
    MoveList<Reversi::Move, Reversi::kMaxMoves> moves;
    g.GenerateMoves(moves);
    int keys[Reversi::kMaxMoves];
    for (int i = 0; i < moves.size(); ++i) keys[i] = g.MoveOrderScore(moves[i]);
    int best = -kInf;
    Reversi::UndoInfo undo;
    for (int i = 0; i < moves.size(); ++i) {
      int pick = i;
      for (int j = i + 1; j < moves.size(); ++j) pick = keys[j] > keys[pick] ? j : pick;
      std::swap(moves[i], moves[pick]);
      std::swap(keys[i], keys[pick]);
      g.Make(moves[i], undo);
      const int score = -Search(g, -beta, -std::max(alpha, best), nullptr);
      g.Unmake(moves[i], undo);
      if (stopped) return 0;
      if (score > best) {
        best = score;
        if (best_move != nullptr) *best_move = moves[i];
        if (best >= beta) break;
      }
    }
    return best;
  }
};

}  // namespace

EndgameResult EndgameSolver::Solve(const Reversi& game, const SearchLimits& limits,
                                   SolveKind kind) {
  if (game.standard()) {
    const Player me = game.SideToMove();
    return impl_->Solve(game.discs(me).w[0], game.discs(me ^ 1).w[0], ~game.walls().w[0], limits,
                        kind);
  }
  GenericSolver solver{Budget(limits)};
  Reversi copy = game;
  EndgameResult result;
  if (copy.GetOutcome() != Outcome::kOngoing) {
    result.score = solver.Final(copy);
  } else {
    result.score = solver.Search(copy, -kInf, kInf, &result.best_move);
  }
  result.solved = !solver.stopped;
  result.nodes = solver.nodes;
  result.elapsed_ms = solver.budget.ElapsedMs();
  return result;
}

EndgameResult SolveEndgame(const Reversi& game, const SearchLimits& limits, SolveKind kind) {
  thread_local EndgameSolver solver(64);
  return solver.Solve(game, limits, kind);
}

absl::StatusOr<ObfPosition> ParseObfLine(std::string_view line) {
  std::vector<absl::string_view> parts = absl::StrSplit(Absl(line), ';');
  std::vector<absl::string_view> head =
      absl::StrSplit(parts[0], absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (head.size() != 2 || head[0].size() != 64 || head[1].size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", Absl(line), "' is not an .obf position: 64 cells, the side to move, then ';'"));
  }
  const char side = absl::ascii_toupper(static_cast<unsigned char>(head[1][0]));
  if (side != 'X' && side != 'O') {
    return absl::InvalidArgumentError(
        absl::StrCat("the side to move must be X or O, not '", head[1], "'"));
  }
  absl::StatusOr<Reversi> game = Reversi::FromCells({}, Std(head[0]), side == 'X' ? 0 : 1);
  if (!game.ok()) return game.status();
  ObfPosition position{*std::move(game), 0, {}};
  for (size_t i = 1; i < parts.size(); ++i) {
    absl::string_view item = absl::StripAsciiWhitespace(parts[i]);
    if (item.empty()) continue;
    std::vector<absl::string_view> kv = absl::StrSplit(item, ':');
    int score = 0;
    absl::string_view score_text = absl::StripAsciiWhitespace(kv.size() == 2 ? kv[1] : "");
    absl::ConsumePrefix(&score_text, "+");
    if (kv.size() != 2 || !absl::SimpleAtoi(score_text, &score)) {
      return absl::InvalidArgumentError(absl::StrCat("'", item, "' is not MOVE:SCORE"));
    }
    if (position.best_moves.empty() || score > position.best_score) {
      position.best_moves.clear();
      position.best_score = score;
    }
    if (score == position.best_score) {
      position.best_moves.push_back(absl::AsciiStrToLower(absl::StripAsciiWhitespace(kv[0])));
    }
  }
  if (position.best_moves.empty()) {
    return absl::InvalidArgumentError("the position lists no move with its score");
  }
  return position;
}

absl::StatusOr<std::vector<ObfPosition>> ReadObfFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<ObfPosition> positions;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string_view text = Trim(line);
    if (text.empty() || text[0] == '%' || text[0] == '#') continue;
    absl::StatusOr<ObfPosition> p = ParseObfLine(text);
    if (!p.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number, ": ", p.status().message()));
    }
    positions.push_back(*std::move(p));
  }
  return positions;
}

absl::StatusOr<std::vector<ObfPosition>> ReadObfFiles(const std::vector<std::string>& paths) {
  std::vector<ObfPosition> positions;
  for (const std::string& path : paths) {
    absl::StatusOr<std::vector<ObfPosition>> read = ReadObfFile(path);
    if (!read.ok()) return read.status();
    positions.insert(positions.end(), read->begin(), read->end());
  }
  return positions;
}

namespace {

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

ObfTableTotals SolveObfTable(const std::vector<ObfPosition>& positions, int first_number,
                             EndgameSolver& solver, const SearchLimits& limits,
                             const std::function<void(const std::string&)>& out) {
  ObfTableTotals totals;
  out(absl::StrFormat("%4s %7s %14s %14s %10s %10s %14s %10s", "#", "empties", "expected", "ply",
                      "time", "cpu", "nodes", "nodes/s"));
  for (const ObfPosition& p : positions) {
    solver.Clear();
    const double cpu_start = ThreadCpuSeconds();
    const EndgameResult r = solver.Solve(p.game, limits);
    const double cpu = ThreadCpuSeconds() - cpu_start;
    const std::string move = p.game.MoveToText(r.best_move);
    const bool right =
        r.solved && r.score == p.best_score &&
        std::find(p.best_moves.begin(), p.best_moves.end(), move) != p.best_moves.end();
    const std::string found =
        r.solved ? absl::StrFormat("%+d %s%s", r.score, move, right ? "" : " !") : "stopped";
    out(absl::StrFormat("%4d %7d %14s %14s %9.3fs %9.3fs %14d %9.2fM",
                        first_number + totals.positions, p.game.Empties(),
                        absl::StrFormat("%+d %s", p.best_score, p.best_moves[0]), found,
                        r.elapsed_ms / 1000, cpu, r.nodes, r.nodes_per_second() / 1e6));
    ++totals.positions;
    totals.wrong += right || !r.solved ? 0 : 1;
    totals.unsolved += r.solved ? 0 : 1;
    totals.seconds += r.elapsed_ms / 1000;
    totals.cpu_seconds += cpu;
    totals.nodes += r.nodes;
  }
  out(absl::StrFormat(
      "total: %d positions, %.3f s (cpu %.3f s), %d nodes, %.2f M nodes/s (%.2f M per cpu "
      "second), %d wrong, %d stopped",
      totals.positions, totals.seconds, totals.cpu_seconds, totals.nodes,
      totals.seconds > 0 ? totals.nodes / totals.seconds / 1e6 : 0.0,
      totals.cpu_seconds > 0 ? totals.nodes / totals.cpu_seconds / 1e6 : 0.0, totals.wrong,
      totals.unsolved));
  return totals;
}

}  // namespace ply::reversi

namespace ply {

namespace {

// What the 8x8 solver needs to finish at n empty cells (the index), exactly and for win, loss or
// draw only: the largest node count over the sample of tests/bench/reversi_solve_reach_bench
// (the FFO sets and 40 games of a 4-ply search played down from 22 empty cells, positions
// solved at every ply with the table cleared; docs/performance.md, "Reversi endgames"), rounded up.
constexpr int64_t kExactNodes[] = {
    // empties 0-7 (the last cells cost next to nothing), 8-13
    0, 1'000, 1'000, 1'000, 1'000, 1'000, 1'000, 1'000, 2'000, 4'000, 9'000, 18'000, 32'000, 66'000,
    // 14-18
    200'000, 271'000, 1'460'000, 3'230'000, 6'510'000,
    // 19-22
    15'900'000, 31'300'000, 63'800'000, 169'500'000};
constexpr int64_t kWinLossDrawNodes[] = {
    // empties 0-7, 8-13
    0, 1'000, 1'000, 1'000, 1'000, 1'000, 1'000, 1'000, 1'000, 1'500, 3'600, 6'100, 10'000, 27'200,
    // 14-18
    114'400, 228'800, 442'400, 755'300, 3'620'000,
    // 19-22
    5'790'000, 14'140'000, 23'160'000, 53'770'000};
constexpr int kMaxTabledEmpties = static_cast<int>(std::size(kExactNodes)) - 1;
static_assert(std::size(kWinLossDrawNodes) == std::size(kExactNodes));

// Solver nodes a millisecond of a clock budget is taken to buy: 37-39 M nodes a second on one
// idle core of the build machine, 15 M leaves room for a machine loaded to two or three times
// the wall time (the loaded build machine measured 27 M wall).
constexpr int64_t kSolverNodesPerMs = 15'000;

}  // namespace

Reversi::SolvePlan Reversi::PlanSolve(const SearchLimits& limits, bool standard) {
  // Three fifths of the budget go to the solver; the rest stays for the search that plays
  // when it does not finish.
  SolvePlan plan;
  // (Divided first: a budget near INT64_MAX, which a client may ask for, must not overflow.)
  plan.max_nodes = limits.max_nodes > 0 ? std::max<int64_t>(1, limits.max_nodes / 5 * 3) : 0;
  plan.time_ms = limits.time_ms > 0 ? std::max<int64_t>(1, limits.time_ms * 3 / 5) : 0;
  if (!standard) {
    // The generic solver of other shapes is far slower: a dozen or so empty cells.
    plan.exact_empties = limits.time_ms == 0 || limits.time_ms >= 4000 ? 14 : 10;
    plan.win_loss_draw_empties = plan.exact_empties;
    return plan;
  }
  int64_t nodes = -1;  // none: no budget
  if (plan.max_nodes > 0) nodes = plan.max_nodes;
  if (plan.time_ms > 0) {
    const int64_t by_clock = plan.time_ms * kSolverNodesPerMs;
    nodes = nodes < 0 ? by_clock : std::min(nodes, by_clock);
  }
  plan.exact_empties = plan.win_loss_draw_empties = 0;
  for (int n = 1; n <= kMaxTabledEmpties; ++n) {
    if (nodes < 0 || kExactNodes[n] <= nodes) plan.exact_empties = n;
    if (nodes < 0 || kWinLossDrawNodes[n] <= nodes) plan.win_loss_draw_empties = n;
  }
  plan.win_loss_draw_empties = std::max(plan.win_loss_draw_empties, plan.exact_empties);
  return plan;
}

std::string Reversi::BudgetPlanText(const Difficulty& level, int64_t max_nodes, int64_t time_ms) {
  if (!level.perfect) return "";
  const SolvePlan plan = PlanSolve({.max_nodes = max_nodes, .time_ms = time_ms}, true);
  return absl::StrFormat("exact<=%d wld<=%d", plan.exact_empties, plan.win_loss_draw_empties);
}

std::optional<SearchResult<Reversi::Move>> Reversi::Solve(Reversi& game,
                                                          const SearchLimits& limits) {
  if (game.GetOutcome() != Outcome::kOngoing) return std::nullopt;
  const SolvePlan plan = PlanSolve(limits, game.standard());
  const int empties = game.Empties();
  if (empties > plan.win_loss_draw_empties) return std::nullopt;
  const reversi::SolveKind kind =
      empties <= plan.exact_empties ? reversi::SolveKind::kExact : reversi::SolveKind::kWinLossDraw;
  const SearchLimits solver_limits{
      .max_nodes = plan.max_nodes, .time_ms = plan.time_ms, .stop = limits.stop};
  const reversi::EndgameResult solved = reversi::SolveEndgame(game, solver_limits, kind);
  SearchResult<Move> result;
  result.nodes = solved.nodes;
  result.elapsed_ms = solved.elapsed_ms;
  // Not finished, or only a loss proven (the search then plays for the opponent's mistakes):
  // no move, and what was spent comes off the caller's budget.
  if (!solved.solved || solved.best_move == kNoMove || (solved.win_loss_draw && solved.score < 0)) {
    result.stopped = !solved.solved;
    return result;
  }
  result.best_move = solved.best_move;
  result.has_move = true;
  result.pv = {result.best_move};
  // A win/loss/draw solve proves the outcome only: its score is a bound (at least +1 for a win),
  // so it is reported as the sign, marked outcome_only ("win (proven)", not "+1 (exact)").
  result.score = solved.win_loss_draw ? (solved.score > 0) - (solved.score < 0) : solved.score;
  result.depth = empties;
  result.exact = true;
  result.outcome_only = solved.win_loss_draw;
  return result;
}

}  // namespace ply
