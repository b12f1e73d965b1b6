// The tables behind Gomoku's incremental board (gomoku.cc): what a line key (the cells around
// a cell in one direction, both players' stones in one number) means for the shapes both
// players make by playing that cell, how those shapes add up to a cell's class and value, and
// what a stone on that line is worth to the evaluation. The look-ups are inline here, as the
// board's make/unmake runs them for every cell a stone reaches; the big tables are built once
// (gomoku_tables.cc).
#ifndef PLY_ENGINE_GAMES_GOMOKU_GOMOKU_TABLES_H_
#define PLY_ENGINE_GAMES_GOMOKU_GOMOKU_TABLES_H_

#include <cstdint>

#include "engine/games/gomoku/gomoku.h"

namespace ply::gomoku_tables {

// What one direction's shape is worth for move generation and order, and what the cell's
// class adds on top (combinations that win by force are worth far more than their parts).
inline constexpr int16_t kShapeValue[Gomoku::kShapeCount] = {0, 1, 3, 10, 10, 40, 45, 250, 1000};
inline constexpr int16_t kClassBonus[Gomoku::kClassCount] = {0, 0, 0, 150, 500, 800, 2000};

// A line's contribution to its cell, packed so that the four directions add up in one integer:
// bits 0-3 count fives, 4-7 open fours, 8-11 fours, 12-15 open threes, 16-31 hold the value.
constexpr uint32_t LineInfo(uint8_t shape) {
  uint32_t counts = shape == Gomoku::kFive        ? 1u
                    : shape == Gomoku::kOpenFour  ? 1u << 4
                    : shape == Gomoku::kFour      ? 1u << 8
                    : shape == Gomoku::kOpenThree ? 1u << 12
                                                  : 0u;
  return counts | static_cast<uint32_t>(kShapeValue[shape]) << 16;
}

inline constexpr uint32_t kLineInfo[Gomoku::kShapeCount] = {LineInfo(0), LineInfo(1), LineInfo(2),
                                                            LineInfo(3), LineInfo(4), LineInfo(5),
                                                            LineInfo(6), LineInfo(7), LineInfo(8)};

// Both players' shapes in one direction as one number, Black's + kShapeCount * White's.
inline constexpr int kPairCount = Gomoku::kShapeCount * Gomoku::kShapeCount;
constexpr uint8_t PairOf(uint8_t black, uint8_t white) {
  return static_cast<uint8_t>(black + Gomoku::kShapeCount * white);
}

// Per pair, each player's shape, and both players' LineInfo in one word (Black's in the low
// half): a cell's two line sums are kept as one 64-bit sum, so one addition moves both (the
// halves never leave 0..2^32 once a sum is complete, so borrows between them cancel out).
struct PairTables {
  constexpr PairTables() {
    for (int pair = 0; pair < kPairCount; ++pair) {
      shape[0][pair] = static_cast<uint8_t>(pair % Gomoku::kShapeCount);
      shape[1][pair] = static_cast<uint8_t>(pair / Gomoku::kShapeCount);
      info[pair] = kLineInfo[shape[0][pair]] | uint64_t{kLineInfo[shape[1][pair]]} << 32;
    }
  }
  uint8_t shape[2][kPairCount] = {};
  uint64_t info[kPairCount] = {};
};
inline constexpr PairTables kPairs;
// The shape counts of both halves of a PairTables::info word (the values are the rest).
inline constexpr uint64_t kCountBits = 0x0000ffff'0000ffffULL;

// The shapes both players make by playing a cell, for every combined line key: a key holds the
// 2 * reach cells around the cell in one direction, two bits each (0 empty, 1 Black, 2 White,
// 3 off the board), cell i (from 0) at offset i - reach below the cell's digits and
// i - reach + 1 above them. Entry: the pair of shapes as one byte, PairOf(Black's, White's). One
// key per cell and direction serves both players, so a stone costs one key update and one
// look-up per cell it reaches instead of two. Freestyle keys reach 4 cells (64 K entries);
// exact ones 5, to tell an overline (1 M entries, built on the first exact game).
const uint8_t* ShapePairs(bool exact);

// The combined key digit of the cell at `offset` (nonzero, |offset| <= reach) from a cell.
constexpr int PairDigit(int offset, int reach) {
  return offset < 0 ? offset + reach : offset + reach - 1;
}

// What a stone is worth along one line, for the evaluation: over the windows of five cells
// through it that hold no opponent stone and no off-board cell (the fives it can still be part
// of), a weight by the number of own stones in the window, so that a window holding k stones
// is worth k times its weight in all; windows blocked for good add nothing. (The evaluation
// used to sum the empty cells' shape values instead: gomoku_search.cc says how they compared.)
// (The weights are in gomoku_tables.cc.) Per line key's middle eight cells (four each side: a
// freestyle key, or an exact one less its outermost digits), both players' rank of a stone
// there: Black's in the low byte, White's in the high one. Built on first use.
const uint16_t* StoneRanks();

// The rank of a stone of `p` whose line key (kReach cells each side) is `key`.
template <int kReach>
inline int StoneRank(const uint16_t* ranks, uint32_t key, int p) {
  const uint32_t middle = kReach == 4 ? key : (key >> 2) & 0xffff;
  return (ranks[middle] >> (8 * p)) & 0xff;
}

// A cell's class from the low 16 bits of its summed line info (its shape counts). A few
// compares: a 64 K-entry table would cost a cache miss on every call.
inline uint8_t ClassOfCounts(uint32_t counts) {
  const uint32_t fives = counts & 15, open_fours = (counts >> 4) & 15, fours = (counts >> 8) & 15,
                 open_threes = (counts >> 12) & 15;
  return fives                      ? Gomoku::kMakesFive
         : open_fours || fours >= 2 ? Gomoku::kMakesWinningFour
         : fours && open_threes     ? Gomoku::kMakesFourThree
         : open_threes >= 2         ? Gomoku::kMakesDoubleThree
         : fours                    ? Gomoku::kMakesFour
         : open_threes              ? Gomoku::kMakesOpenThree
                                    : Gomoku::kQuiet;
}

}  // namespace ply::gomoku_tables

namespace ply {
// Here rather than in gomoku.cc: the threat searches (gomoku_threats.cc) read shapes too.
inline uint8_t Gomoku::ShapeOf(int cell, int d, int p) const {
  return gomoku_tables::kPairs.shape[p][pairs_[key_[cell][d]]];
}
}  // namespace ply

#endif  // PLY_ENGINE_GAMES_GOMOKU_GOMOKU_TABLES_H_
