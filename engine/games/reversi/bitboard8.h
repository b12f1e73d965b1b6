// Move generation and flips for the standard 8x8 Reversi board on one 64-bit word, shared by the
// game class (its fast path) and the exact endgame solver.
//
// Layout: cell (column c, row r), a1 = top-left, is bit r * 8 + c, so a1 is bit 0, h1 bit 7 and
// h8 bit 63 (the order of the usual .obf position strings). Blocked cells ("walls") are simply
// cells that are in neither side's set and not in `board`: runs of discs stop at them and no move
// lands on them.
#ifndef PLY_ENGINE_GAMES_REVERSI_BITBOARD8_H_
#define PLY_ENGINE_GAMES_REVERSI_BITBOARD8_H_

#include <array>
#include <bit>
#include <cstdint>

// BMI2's PEXT/PDEP gather and scatter the cells of a line; with them flips are table lookups.
#if defined(__BMI2__)
#include <immintrin.h>
#define PLY_REVERSI_PEXT 1
#else
#define PLY_REVERSI_PEXT 0
#endif

namespace ply::reversi8 {

inline constexpr uint64_t kAll = ~uint64_t{0};
// Every column but a and h: a disc shifted sideways must not wrap to the next row.
inline constexpr uint64_t kInnerColumns = 0x7e7e7e7e7e7e7e7eULL;

// The cells reached from `own` over one or more consecutive `mask` cells in the direction of
// `dir` bits (both ways), by Kogge-Stone doubling.
inline uint64_t MovesInDirection(uint64_t own, uint64_t mask, int dir) {
  uint64_t left = mask & (own << dir);
  uint64_t right = mask & (own >> dir);
  left |= mask & (left << dir);
  right |= mask & (right >> dir);
  const uint64_t mask_left = mask & (mask << dir);
  const uint64_t mask_right = mask_left >> dir;
  left |= mask_left & (left << (2 * dir));
  right |= mask_right & (right >> (2 * dir));
  left |= mask_left & (left << (2 * dir));
  right |= mask_right & (right >> (2 * dir));
  return (left << dir) | (right >> dir);
}

// Legal moves of `own` against `opp`; `empty` is the set of playable empty cells.
inline uint64_t Moves(uint64_t own, uint64_t opp, uint64_t empty) {
  const uint64_t inner = opp & kInnerColumns;
  return (MovesInDirection(own, inner, 1) | MovesInDirection(own, opp, 8) |
          MovesInDirection(own, inner, 7) | MovesInDirection(own, inner, 9)) &
         empty;
}

// Rays from each cell in the 8 directions, not including the cell itself. Directions 0..3 go
// towards higher bit indices (E, SW, S, SE), 4..7 towards lower ones (W, NE, N, NW).
struct Rays {
  std::array<std::array<uint64_t, 8>, 64> ray{};
};

constexpr Rays MakeRays() {
  Rays r;
  constexpr int kDc[8] = {1, -1, 0, 1, -1, 1, 0, -1};
  constexpr int kDr[8] = {0, 1, 1, 1, 0, -1, -1, -1};
  for (int sq = 0; sq < 64; ++sq) {
    for (int d = 0; d < 8; ++d) {
      uint64_t m = 0;
      int c = sq % 8 + kDc[d], row = sq / 8 + kDr[d];
      while (c >= 0 && c < 8 && row >= 0 && row < 8) {
        m |= uint64_t{1} << (row * 8 + c);
        c += kDc[d];
        row += kDr[d];
      }
      r.ray[sq][d] = m;
    }
  }
  return r;
}

inline constexpr Rays kRays = MakeRays();

// The discs of `opp` that a disc of `own` placed on `sq` turns over (0 if the move is illegal),
// by walking the eight rays: the portable version.
inline uint64_t RayFlips(uint64_t own, uint64_t opp, int sq) {
  const auto& rays = kRays.ray[sq];
  uint64_t flips = 0;
  for (int d = 0; d < 4; ++d) {
    // The first cell along the ray that is not the opponent's must be ours.
    const uint64_t ray = rays[d];
    const uint64_t stop = ray & ~opp;
    const uint64_t first = stop & (0 - stop);
    flips |= (first & own) ? ray & (first - 1) : 0;
  }
  for (int d = 4; d < 8; ++d) {
    const uint64_t ray = rays[d];
    const uint64_t stop = ray & ~opp;
    const uint64_t first = stop ? uint64_t{1} << (63 - std::countl_zero(stop)) : 0;
    flips |= (first & own) ? ray & ~((first << 1) - 1) : 0;
  }
  return flips;
}

#if PLY_REVERSI_PEXT
// Flips along the four lines through a cell, gathered with PEXT and scattered back with PDEP.
// For a move at position p of a line, kLines.outflank[p][opponent pattern] marks the cells just
// past the opponent's runs next to p (on both sides); those of them that hold the mover's discs
// close a run, and kLines.flipped[p][closing cells] is what then turns over. Cells past the end
// of a short line read as empty. kLines.count[p][pattern] is the number of discs turned over by
// the very last move, when every other cell is taken: `pattern` is the mover's discs and the
// rest of the line belongs to the opponent (cells past the end read as the opponent's and never
// close a run, so one table serves every length).
struct LineTables {
  uint64_t line[64][4] = {};
  uint8_t position[64][4] = {};
  uint8_t outflank[8][256] = {};
  uint8_t flipped[8][256] = {};
  uint8_t count[8][256] = {};
};
constexpr LineTables MakeLineTables() {
  LineTables t{};
  constexpr int kDc[4] = {1, 0, 1, 1};
  constexpr int kDr[4] = {0, 1, 1, -1};
  for (int sq = 0; sq < 64; ++sq) {
    for (int k = 0; k < 4; ++k) {
      // Walk back to the start of the line, then along it.
      int r = sq / 8, c = sq % 8;
      while (r - kDr[k] >= 0 && r - kDr[k] < 8 && c - kDc[k] >= 0 && c - kDc[k] < 8) {
        r -= kDr[k];
        c -= kDc[k];
      }
      uint64_t mask = 0;
      for (; r >= 0 && r < 8 && c >= 0 && c < 8; r += kDr[k], c += kDc[k]) {
        mask |= uint64_t{1} << (r * 8 + c);
      }
      t.line[sq][k] = mask;
      int below = 0;
      for (int i = 0; i < sq; ++i) below += (mask >> i) & 1;
      t.position[sq][k] = static_cast<uint8_t>(below);
    }
  }
  for (int p = 0; p < 8; ++p) {
    for (int pattern = 0; pattern < 256; ++pattern) {
      int total = 0;
      for (int dir : {-1, 1}) {
        int run = 0;
        int i = p + dir;
        for (; i >= 0 && i < 8 && ((pattern >> i) & 1) == 0; i += dir) ++run;
        if (i >= 0 && i < 8) total += run;
        // As the opponent's pattern: the cell past a non-empty run may close it.
        int j = p + dir;
        for (; j >= 0 && j < 8 && ((pattern >> j) & 1); j += dir) {
        }
        if (j != p + dir && j >= 0 && j < 8) t.outflank[p][pattern] |= 1 << j;
        // As closing cells: everything strictly between p and a closing cell turns over.
        if (((pattern >> p) & 1) == 0) {
          for (int c = p + dir; c >= 0 && c < 8; c += dir) {
            if ((pattern >> c) & 1) {
              for (int b = p + dir; b != c; b += dir) t.flipped[p][pattern] |= 1 << b;
              break;
            }
          }
        }
      }
      t.count[p][pattern] = static_cast<uint8_t>(total);
    }
  }
  return t;
}
constexpr LineTables kLines = MakeLineTables();

// The discs of `opp` that a disc of `own` placed on `cell` turns over (0 if the move is illegal).
inline uint64_t Flips(uint64_t own, uint64_t opp, int cell) {
  uint64_t flips = 0;
  for (int k = 0; k < 4; ++k) {
    const uint64_t line = kLines.line[cell][k];
    const int p = kLines.position[cell][k];
    const uint64_t closing = kLines.outflank[p][_pext_u64(opp, line)] & _pext_u64(own, line);
    flips |= _pdep_u64(kLines.flipped[p][closing], line);
  }
  return flips;
}

// Discs turned over by `own` playing `cell` when every other cell is taken (no walls).
inline int CountLastFlips(uint64_t own, int cell) {
  int n = 0;
  for (int k = 0; k < 4; ++k) {
    const uint64_t pattern = _pext_u64(own, kLines.line[cell][k]);
    n += kLines.count[kLines.position[cell][k]][pattern];
  }
  return n;
}
#else
inline uint64_t Flips(uint64_t own, uint64_t opp, int sq) { return RayFlips(own, opp, sq); }
#endif

}  // namespace ply::reversi8

#endif  // PLY_ENGINE_GAMES_REVERSI_BITBOARD8_H_
