#include "engine/games/gomoku/gomoku_tables.h"

#include <algorithm>
#include <array>
#include <vector>

namespace ply::gomoku_tables {
namespace {

// A line key holds the ten cells around a cell in one direction, five on each side, as base-3
// digits: 0 empty, 1 own stone, 2 blocked (opponent stone or off the board). Digit i is the
// cell at offset i - 5 for i < 5 and i - 4 for i >= 5.
constexpr int kKeyDigits = 10;
constexpr int kKeyCount = 59049;  // 3^10
constexpr std::array<int, kKeyDigits> kPow3 = {1, 3, 9, 27, 81, 243, 729, 2187, 6561, 19683};

constexpr int DigitOfOffset(int offset) { return offset < 0 ? offset + 5 : offset + 4; }

// The shape a player makes along one line by playing its centre, for every key. Built once per
// rule: a shape is five, or else it is classified by the shapes one more own stone can reach
// (a four has one cell that makes five, an open four two; a three can become a four, an open
// three an open four; and so on down). Only fives through the centre count, so the table says
// what this move makes. The overline rule is applied here and nowhere else.
class ShapeTable {
 public:
  explicit ShapeTable(bool exact) : exact_(exact) {
    memo_.fill(0xff);
    for (int key = 0; key < kKeyCount; ++key) Compute(key);
  }
  const uint8_t* data() const { return memo_.data(); }

 private:
  bool IsFive(const int* line) const {
    int run = 1;
    for (int i = 4; i >= 0 && line[i] == 1; --i) ++run;
    for (int i = 6; i <= 10 && line[i] == 1; ++i) ++run;
    return exact_ ? run == 5 : run >= 5;
  }

  uint8_t Compute(int key) {
    if (memo_[key] != 0xff) return memo_[key];
    int line[11];
    for (int i = 0, k = key; i < kKeyDigits; ++i, k /= 3) line[i < 5 ? i : i + 1] = k % 3;
    line[5] = 1;
    uint8_t result;
    if (IsFive(line)) {
      result = Gomoku::kFive;
    } else {
      int fives = 0;
      uint8_t best = Gomoku::kDead;
      for (int pos = 0; pos <= 10; ++pos) {
        if (pos == 5 || line[pos] != 0) continue;
        uint8_t child = Compute(key + kPow3[pos < 5 ? pos : pos - 1]);
        if (child == Gomoku::kFive) {
          ++fives;
        } else {
          best = std::max(best, child);
        }
      }
      if (fives >= 2) {
        result = Gomoku::kOpenFour;
      } else if (fives == 1) {
        result = Gomoku::kFour;
      } else {
        static constexpr uint8_t kOneLess[Gomoku::kShapeCount] = {
            Gomoku::kDead,    Gomoku::kOne,   Gomoku::kOne,       Gomoku::kOne, Gomoku::kTwo,
            Gomoku::kOpenTwo, Gomoku::kThree, Gomoku::kOpenThree, Gomoku::kFour};
        result = kOneLess[best];
      }
    }
    memo_[key] = result;
    return result;
  }

  bool exact_;
  std::array<uint8_t, kKeyCount> memo_;
};

// Both players' shapes per combined line key (gomoku_tables.h, ShapePairs).
struct RuleTables {
  explicit RuleTables(bool exact) : reach(exact ? 5 : 4), pairs(size_t{1} << (4 * reach)) {
    ShapeTable table(exact);
    const uint8_t* shapes = table.data();
    for (uint32_t key = 0; key < pairs.size(); ++key) {
      int base3[2] = {0, 0};
      for (int i = 0; i < 2 * reach; ++i) {
        const uint32_t v = (key >> (2 * i)) & 3;
        const int offset = i < reach ? i - reach : i - reach + 1;
        const int pow = kPow3[DigitOfOffset(offset)];
        for (uint32_t p = 0; p < 2; ++p) base3[p] += (v == 0 ? 0 : v == p + 1 ? 1 : 2) * pow;
      }
      pairs[key] = PairOf(shapes[base3[0]], shapes[base3[1]]);
    }
  }
  int reach;
  std::vector<uint8_t> pairs;
};

// A window of five's weight by the own stones in it, for the stone ranks (StoneRanks in
// gomoku_tables.h says what a rank is).
constexpr int kWindowWeight[6] = {0, 1, 3, 7, 12, 12};

struct StoneRankTable {
  StoneRankTable() : rank(1 << 16) {
    for (uint32_t key = 0; key < rank.size(); ++key) {
      int cells[9];  // offsets -4..4, the stone at 4: 0 empty, 1 Black, 2 White, 3 off the board
      for (int i = 0; i < 8; ++i) cells[i < 4 ? i : i + 1] = (key >> (2 * i)) & 3;
      uint16_t packed = 0;
      for (int p = 0; p < 2; ++p) {
        cells[4] = 1 + p;
        int sum = 0;
        for (int start = 0; start <= 4; ++start) {
          int own = 0;
          bool open = true;
          for (int i = start; i < start + 5; ++i) {
            if (cells[i] == 1 + p) {
              ++own;
            } else if (cells[i] != 0) {
              open = false;
            }
          }
          if (open) sum += kWindowWeight[own];
        }
        packed |= static_cast<uint16_t>(sum << (8 * p));  // at most 5 * 12
      }
      rank[key] = packed;
    }
  }
  std::vector<uint16_t> rank;
};

}  // namespace

const uint8_t* ShapePairs(bool exact) {
  if (exact) {
    static const RuleTables* exact_five = new RuleTables(true);
    return exact_five->pairs.data();
  }
  static const RuleTables* freestyle = new RuleTables(false);
  return freestyle->pairs.data();
}

const uint16_t* StoneRanks() {
  static const StoneRankTable* table = new StoneRankTable();
  return table->rank.data();
}

}  // namespace ply::gomoku_tables
