#include "engine/games/gomoku/gomoku.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/random.h"
#include "engine/core/text.h"
#include "engine/games/gomoku/gomoku_tables.h"

namespace ply {

using gomoku_tables::ClassOfCounts;
using gomoku_tables::kCountBits;
using gomoku_tables::kLineInfo;
using gomoku_tables::kPairs;
using gomoku_tables::PairDigit;
using gomoku_tables::ShapePairs;
using gomoku_tables::StoneRank;
using gomoku_tables::StoneRanks;

namespace {

// The greedy baseline's pattern weights, growing about x5-x10 a stone. Blocking weighs a little
// more than building, except that winning beats blocking and an open four beats blocking a
// three.
constexpr int64_t kGreedyAttack[Gomoku::kShapeCount] = {0, 1, 5, 10, 50, 100, 500, 10000, 1000000};
constexpr int64_t kGreedyDefence[Gomoku::kShapeCount] = {0, 1, 6, 12, 60, 120, 600, 5000, 100000};

}  // namespace

Gomoku::Gomoku(int size, bool exact) : size_(size), exact_(exact), reach_(exact ? 5 : 4) {
  salt_ = Mix64(0x90'0000ULL ^ (static_cast<uint64_t>(size) << 8) ^ (exact ? 1 : 0));
  mixed_salt_ = Mix64(salt_);
  pairs_ = ShapePairs(exact);
  stone_ranks_ = StoneRanks();
  std::fill(std::begin(board_), std::end(board_), kWall);
  std::fill(std::begin(near_), std::end(near_), 0);
  std::fill(&class_[0][0], &class_[0][0] + 2 * kCells, kQuiet);
  std::fill(&key_[0][0], &key_[0][0] + kCells * 4, 0);
  std::fill(std::begin(line_sum_), std::end(line_sum_), 0);
  std::fill(&shape_[0][0], &shape_[0][0] + kCells * 4, 0);
  for (int y = 0; y < size_; ++y) {
    for (int x = 0; x < size_; ++x) board_[CellAt(x, y)] = kEmptyCell;
  }
  // Off-board cells block both players' lines.
  static constexpr int kDx[4] = {1, 0, 1, -1};
  static constexpr int kDy[4] = {0, 1, 1, 1};
  for (int y = 0; y < size_; ++y) {
    for (int x = 0; x < size_; ++x) {
      int cell = CellAt(x, y);
      for (int d = 0; d < 4; ++d) {
        for (int off = -reach_; off <= reach_; ++off) {
          if (off == 0 || OnBoard(x + off * kDx[d], y + off * kDy[d])) continue;
          key_[cell][d] += 3u << (2 * PairDigit(off, reach_));
        }
      }
    }
  }
  for (int y = 0; y < size_; ++y) {
    for (int x = 0; x < size_; ++x) {
      int cell = CellAt(x, y);
      RefreshShapes(cell);
      for (int p = 0; p < 2; ++p) Classify(cell, p);
    }
  }
  hash_ = ComputeHash();
}

namespace {
// The option defaults, written once: OptionInfos publishes them and Create applies them.
constexpr int kDefaultSize = 15;
constexpr std::string_view kDefaultRule = "freestyle";
}  // namespace

std::vector<OptionInfo> Gomoku::OptionInfos() {
  return {
      {"size", absl::StrCat(kDefaultSize), "board size, 5..20 (a square board)"},
      {"rule", std::string(kDefaultRule),
       "freestyle: five or more in a row wins; exact: exactly five wins, an overline does not"},
  };
}

std::vector<Difficulty> Gomoku::Levels() {
  std::vector<Difficulty> levels = DefaultLevels();
  for (Difficulty& d : levels) {
    if (d.name == "medium") d.max_depth = 5;
  }
  levels.push_back({.name = "greedy",
                    .max_depth = 1,
                    .time_ms = 100,
                    .policy = "greedy",
                    .description = "baseline: the classic one-ply pattern-score Gomoku AI"});
  return levels;
}

absl::StatusOr<Gomoku> Gomoku::Create(const GameOptions& options) {
  absl::StatusOr<int> size = IntOption(options, "size", kDefaultSize, 5, kMaxSize);
  if (!size.ok()) return size.status();
  absl::StatusOr<std::string> rule =
      ChoiceOption(options, "rule", kDefaultRule, {"freestyle", "exact"});
  if (!rule.ok()) return rule.status();
  return Gomoku(*size, *rule == "exact");
}

GameOptions Gomoku::EffectiveOptions() const {
  return {{"size", std::to_string(size_)}, {"rule", exact_ ? "exact" : "freestyle"}};
}

uint64_t Gomoku::ComputeHash() const {
  uint64_t h = 0;
  for (int cell = 0; cell < kCells; ++cell) {
    if (board_[cell] == 1 || board_[cell] == 2) h ^= CellKey(board_[cell] - 1, cell);
  }
  return h;
}

int Gomoku::StoneAt(int x, int y) const {
  uint8_t v = board_[CellAt(x, y)];
  return v == 1 || v == 2 ? v - 1 : -1;
}

Gomoku::Shape Gomoku::ShapeAt(Player p, Move cell, int direction) const {
  return static_cast<Shape>(ShapeOf(cell, direction, p));
}

[[gnu::always_inline]] inline void Gomoku::Classify(int cell, int p) {
  const uint32_t sum = static_cast<uint32_t>(line_sum_[cell] >> (32 * p));
  const uint8_t c = ClassOfCounts(sum & 0xffff);
  const uint8_t old = class_[p][cell];
  if (c != old) {
    --class_count_[p][old];
    ++class_count_[p][c];
    if (old != kQuiet) ClearBit(class_bits_[p][old], cell);
    if (c != kQuiet) SetBit(class_bits_[p][c], cell);
    class_[p][cell] = c;
  }
}

void Gomoku::Retire(int cell) {
  for (int p = 0; p < 2; ++p) {
    const uint8_t old = class_[p][cell];
    --class_count_[p][old];
    ++class_count_[p][kQuiet];
    if (old != kQuiet) ClearBit(class_bits_[p][old], cell);
    class_[p][cell] = kQuiet;
  }
}

template <int kReach, class Visit>
[[gnu::always_inline]] inline void Gomoku::WalkLines(const uint8_t* board, int cell,
                                                     Visit&& visit) {
  for (int d = 0; d < 4; ++d) {
    const int step = kDirections[d];
#pragma GCC unroll 2
    for (int dir = -1; dir <= 1; dir += 2) {
      int other = cell;
#pragma GCC unroll 5
      for (int k = 1; k <= kReach; ++k) {
        other += dir * step;
        const uint8_t stone = board[other];
        if (stone == kWall) break;
        visit(other, d, stone, 2 * PairDigit(-dir * k, kReach));
      }
    }
  }
}

template <int kReach, int kSign, bool kRanks>
void Gomoku::UpdateLines(int cell, int p) {
  // Members read through locals: the stores below could otherwise alias them for the compiler.
  const uint8_t* const pairs = pairs_;
  int dstone0 = 0, dstone1 = 0;
  const uint32_t digit = static_cast<uint32_t>(1 + p);
  WalkLines<kReach>(board_, cell, [&](int other, int d, uint8_t stone, int shift) {
    const uint32_t delta = digit << shift;
    const uint32_t key = kSign > 0 ? key_[other][d] + delta : key_[other][d] - delta;
    // An occupied cell keeps only its keys (its shapes wait for the stone to come off) and,
    // with kRanks, its stone's rank.
    if (stone != kEmptyCell) {
      if (kRanks) {
        const int q = stone - 1;
        (q == 0 ? dstone0 : dstone1) += StoneRank<kReach>(stone_ranks_, key, q) -
                                        StoneRank<kReach>(stone_ranks_, key_[other][d], q);
      }
      key_[other][d] = key;
      return;
    }
    key_[other][d] = key;
    const uint8_t before = shape_[other][d], after = pairs[key];
    // Sometimes neither player's shape moves: nothing to redo.
    if (before == after) return;
    shape_[other][d] = after;
    const uint64_t info_before = kPairs.info[before], info_after = kPairs.info[after];
    line_sum_[other] += info_after - info_before;
    // Most changes move only the shapes' values (in the sum, read by the move order); the
    // classes follow the shape counts.
    const uint64_t counts_moved = (info_after ^ info_before) & kCountBits;
    if (counts_moved == 0) return;
    if (static_cast<uint32_t>(counts_moved) != 0) Classify(other, 0);
    if ((counts_moved >> 32) != 0) Classify(other, 1);
  });
  if (!kRanks) return;
  // The stone's own rank: its keys do not change with it.
  int own = 0;
  for (int d = 0; d < 4; ++d) own += StoneRank<kReach>(stone_ranks_, key_[cell][d], p);
  stone_score_[0] += dstone0 + (p == 0 ? kSign * own : 0);
  stone_score_[1] += dstone1 + (p == 1 ? kSign * own : 0);
}

template <int kReach>
void Gomoku::PeekLines(int cell, int p, LeafCounts& after) const {
  // UpdateLines<kReach, +1, true>'s walk with its writes kept in `after`: each cell within
  // reach lies on one line through `cell` only, so its new shape pair and line sum follow from
  // one key each and nothing accumulates.
  for (int q = 0; q < 2; ++q) {
    for (int c = 0; c < kClassCount; ++c) after.count[q][c] = class_count_[q][c];
    after.stone_score[q] = stone_score_[q];
    // `cell` leaves its classes (Retire).
    --after.count[q][class_[q][cell]];
    ++after.count[q][kQuiet];
  }
  const uint32_t digit = static_cast<uint32_t>(1 + p);
  WalkLines<kReach>(board_, cell, [&](int other, int d, uint8_t stone, int shift) {
    const uint32_t old_key = key_[other][d];
    const uint32_t key = old_key + (digit << shift);
    if (stone != kEmptyCell) {
      const int q = stone - 1;
      after.stone_score[q] +=
          StoneRank<kReach>(stone_ranks_, key, q) - StoneRank<kReach>(stone_ranks_, old_key, q);
      return;
    }
    const uint8_t before = shape_[other][d], now = pairs_[key];
    if (before == now) return;
    const uint64_t info_before = kPairs.info[before], info_now = kPairs.info[now];
    const uint64_t moved = (info_now ^ info_before) & kCountBits;
    if (moved == 0) return;
    const uint64_t sum = line_sum_[other] + info_now - info_before;
    for (int q = 0; q < 2; ++q) {
      if (static_cast<uint32_t>(moved >> (32 * q)) == 0) continue;
      const uint8_t c = ClassOfCounts(static_cast<uint32_t>(sum >> (32 * q)) & 0xffff);
      const uint8_t old = class_[q][other];
      --after.count[q][old];
      ++after.count[q][c];
    }
  });
  for (int d = 0; d < 4; ++d) {
    after.stone_score[p] += StoneRank<kReach>(stone_ranks_, key_[cell][d], p);
  }
}

void Gomoku::PeekLines(int cell, int p, LeafCounts& after) const {
  if (exact_) {
    PeekLines<5>(cell, p, after);
  } else {
    PeekLines<4>(cell, p, after);
  }
}

template <int kSign, bool kRanks>
void Gomoku::UpdateLines(int cell, int p) {
  if (exact_) {
    UpdateLines<5, kSign, kRanks>(cell, p);
  } else {
    UpdateLines<4, kSign, kRanks>(cell, p);
  }
}

void Gomoku::RefreshShapes(int cell) {
  uint64_t sum = 0;
  for (int d = 0; d < 4; ++d) {
    const uint8_t pair = pairs_[key_[cell][d]];
    shape_[cell][d] = pair;
    sum += kPairs.info[pair];
  }
  line_sum_[cell] = sum;
}

template <bool kRanks>
void Gomoku::PlaceLines(int cell, int p) {
  Retire(cell);
  board_[cell] = static_cast<uint8_t>(1 + p);
  UpdateLines<+1, kRanks>(cell, p);
}

void Gomoku::RemoveLines(int cell, int p) {
  board_[cell] = kEmptyCell;
  UpdateLines<-1, false>(cell, p);
  // The cell's shapes and line sums need no refresh: the stone was the last placed (stones come
  // off in the reverse order), so its keys are back to what they were when it was placed, and
  // an occupied cell's shapes and sums are never touched (UpdateLines skips them).
  Classify(cell, 0);
  Classify(cell, 1);
}

// The VCF search's (gomoku_threats.cc).
template void Gomoku::PlaceLines<false>(int cell, int p);

namespace {
// Five bytes of a row at once: the near counts are below 26 and board bytes below 4, so a byte
// is zero exactly when adding 0x7f to it leaves its top bit clear, and no addition carries
// into the next byte.
constexpr uint64_t kOnes5 = 0x0101010101, kLow7 = 0x7f7f7f7f7f, kHigh5 = 0x8080808080;
// The five cells from `bytes`' first whose byte is zero, as bits 0..4: the top bits (7, 15, ..,
// 39) shifted to 0, 8, .., 32 and gathered by one multiply, bit 8i times 2^(4 + 7 (4 - i))
// landing on 32 + i (every product bit distinct, so nothing carries). Portable, unlike BMI2's
// PEXT, and as fast where PEXT is native.
inline uint64_t ZeroBytes5(uint64_t bytes) {
  return (((~(bytes + kLow7) & kHigh5) >> 7) * 0x102040810ULL) >> 32 & 0x1f;
}
}  // namespace

void Gomoku::AddNear(int cell) {
  for (int dy = -2; dy <= 2; ++dy) {
    const int base = cell + dy * kStride - 2;
    uint64_t near, board;
    std::memcpy(&near, near_ + base, sizeof near);
    std::memcpy(&board, board_ + base, sizeof board);
    // Empty cells that had no stone near them join the set.
    const uint64_t joined = ZeroBytes5(near) & ZeroBytes5(board);
    near += kOnes5;
    std::memcpy(near_ + base, &near, sizeof near);
    const int word = base >> 6, bit = base & 63;
    near_bits_[word] |= joined << bit;
    if (bit > 59) near_bits_[word + 1] |= joined >> (64 - bit);
  }
}

void Gomoku::SubtractNear(int cell) {
  for (int dy = -2; dy <= 2; ++dy) {
    const int base = cell + dy * kStride - 2;
    uint64_t near;
    std::memcpy(&near, near_ + base, sizeof near);
    near -= kOnes5;
    std::memcpy(near_ + base, &near, sizeof near);
    // Cells left with no stone near them leave the set.
    const uint64_t left = ZeroBytes5(near);
    const int word = base >> 6, bit = base & 63;
    near_bits_[word] &= ~(left << bit);
    if (bit > 59) near_bits_[word + 1] &= ~(left >> (64 - bit));
  }
}

void Gomoku::PlaceThreat(int cell, int p) {
  PlaceLines<false>(cell, p);
  hash_ ^= CellKey(p, cell);
}

void Gomoku::RemoveThreat(int cell, int p) {
  hash_ ^= CellKey(p, cell);
  RemoveLines(cell, p);
}

void Gomoku::Make(Move cell, UndoInfo&) {
  const int p = SideToMove();
  // An empty cell's class is kMakesFive exactly when one of its shapes is a five.
  const bool five = class_[p][cell] == kMakesFive;
  score_before_.before[stones_][0] = stone_score_[0];
  score_before_.before[stones_][1] = stone_score_[1];
  PlaceLines<true>(cell, p);
  ClearBit(near_bits_, cell);
  AddNear(cell);
  hash_ ^= CellKey(p, cell);
  ++stones_;
  last_move_won_ = five;
}

void Gomoku::Unmake(Move cell, const UndoInfo&) {
  --stones_;
  const int p = SideToMove();
  hash_ ^= CellKey(p, cell);
  SubtractNear(cell);
  RemoveLines(cell, p);
  stone_score_[0] = score_before_.before[stones_][0];
  stone_score_[1] = score_before_.before[stones_][1];
  if (near_[cell] > 0) SetBit(near_bits_, cell);
  last_move_won_ = false;
}

void Gomoku::GenerateMoves(MoveList<Move, kMaxMoves>& moves) const {
  for (int y = 0; y < size_; ++y) {
    for (int x = 0; x < size_; ++x) {
      Move cell = CellAt(x, y);
      if (board_[cell] == kEmptyCell) moves.push_back(cell);
    }
  }
}

std::string Gomoku::CheckIncrementalState() const {
  static constexpr int kDx[4] = {1, 0, 1, -1};
  static constexpr int kDy[4] = {0, 1, 1, 1};
  int class_count[2][kClassCount] = {};
  int64_t stone_score[2] = {0, 0};
  uint64_t class_bits[2][kClassCount][kWords] = {};
  uint64_t near_bits[kWords] = {};
  for (int y = 0; y < size_; ++y) {
    for (int x = 0; x < size_; ++x) {
      const int cell = CellAt(x, y);
      const std::string where = absl::StrCat(" at ", MoveToText(static_cast<Move>(cell)));
      int near = 0;
      for (int dy = -2; dy <= 2; ++dy) {
        for (int dx = -2; dx <= 2; ++dx)
          near += OnBoard(x + dx, y + dy) && StoneAt(x + dx, y + dy) >= 0;
      }
      if (near != near_[cell]) return absl::StrCat("near count", where);
      if (near > 0 && board_[cell] == kEmptyCell) SetBit(near_bits, cell);
      uint32_t keys[4];
      for (int d = 0; d < 4; ++d) {
        uint32_t key = 0;
        for (int off = -reach_; off <= reach_; ++off) {
          if (off == 0) continue;
          const int ox = x + off * kDx[d], oy = y + off * kDy[d];
          const uint32_t digit = !OnBoard(ox, oy) ? 3 : static_cast<uint32_t>(StoneAt(ox, oy) + 1);
          key |= digit << (2 * PairDigit(off, reach_));
        }
        if (key != key_[cell][d]) return absl::StrCat("line key ", d, where);
        if (board_[cell] == kEmptyCell && pairs_[key] != shape_[cell][d]) {
          return absl::StrCat("shapes ", d, where);
        }
        keys[d] = key;
      }
      if (board_[cell] == 1 || board_[cell] == 2) {
        const int p = board_[cell] - 1;
        for (int d = 0; d < 4; ++d) {
          stone_score[p] += reach_ == 4 ? StoneRank<4>(stone_ranks_, keys[d], p)
                                        : StoneRank<5>(stone_ranks_, keys[d], p);
        }
      }
      for (int p = 0; p < 2; ++p) {
        uint32_t sum = 0;
        for (int d = 0; d < 4; ++d) sum += kLineInfo[kPairs.shape[p][pairs_[keys[d]]]];
        if (board_[cell] != kEmptyCell) {
          if (class_[p][cell] != kQuiet) {
            return absl::StrCat("class of an occupied cell", where);
          }
          continue;
        }
        if (sum != static_cast<uint32_t>(line_sum_[cell] >> (32 * p)))
          return absl::StrCat("line sum of player ", p, where);
        const uint8_t c = ClassOfCounts(sum & 0xffff);
        if (c != class_[p][cell]) return absl::StrCat("class of player ", p, where);
        ++class_count[p][c];
        if (c != kQuiet) SetBit(class_bits[p][c], cell);
      }
    }
  }
  for (int p = 0; p < 2; ++p) {
    if (stone_score[p] != stone_score_[p]) return absl::StrCat("stone score of player ", p);
    for (int c = 1; c < kClassCount; ++c) {
      if (class_count[p][c] != class_count_[p][c]) {
        return absl::StrCat("count of class ", c, " for player ", p);
      }
      if (!std::equal(class_bits[p][c], class_bits[p][c] + kWords, class_bits_[p][c])) {
        return absl::StrCat("cells of class ", c, " for player ", p);
      }
    }
  }
  if (!std::equal(near_bits, near_bits + kWords, near_bits_)) return "cells near the stones";
  if (hash_ != ComputeHash()) return "hash";
  return "";
}

Gomoku::Move Gomoku::GreedyMove(uint64_t seed) const {
  if (stones_ == 0) return CellAt(size_ / 2, size_ / 2);
  const int me = SideToMove(), op = 1 - me;
  Rng rng(seed);
  Move best = kNoMove;
  int64_t best_score = -1;
  int ties = 0;
  for (int y = 0; y < size_; ++y) {
    for (int x = 0; x < size_; ++x) {
      Move c = CellAt(x, y);
      if (board_[c] != kEmptyCell) continue;
      int64_t score = 0;
      for (int d = 0; d < 4; ++d) {
        score += kGreedyAttack[ShapeOf(c, d, me)] + kGreedyDefence[ShapeOf(c, d, op)];
      }
      if (score > best_score) {
        best_score = score;
        best = c;
        ties = 1;
      } else if (score == best_score && rng.Below(static_cast<uint64_t>(++ties)) == 0) {
        best = c;
      }
    }
  }
  return best;
}

std::optional<SearchResult<Gomoku::Move>> Gomoku::PlayPolicy(Gomoku& game, std::string_view policy,
                                                             const SearchLimits& limits) {
  if (policy != "greedy") return std::nullopt;
  SearchResult<Move> result;
  if (game.GetOutcome() != Outcome::kOngoing) return result;
  result.best_move = game.GreedyMove(Mix64(limits.seed ^ game.Hash()));
  result.has_move = true;
  result.depth = 1;
  result.nodes = game.size_ * game.size_ - game.stones_;
  result.pv = {result.best_move};
  return result;
}

GameStatus Gomoku::Status() const {
  switch (GetOutcome()) {
    case Outcome::kLoss:
      return {.over = true,
              .winner = 1 - SideToMove(),
              .reason = exact_ ? "exactly five in a row" : "five in a row"};
    case Outcome::kDraw:
      return {.over = true, .winner = -1, .reason = "the board is full"};
    default:
      return {};
  }
}

std::string Gomoku::MoveToText(Move cell) const {
  return absl::StrCat(std::string(1, static_cast<char>('a' + XOf(cell))), size_ - YOf(cell));
}

absl::StatusOr<Gomoku::Move> Gomoku::ParseMove(std::string_view text) const {
  text = Trim(text);
  const char last_column = static_cast<char>('a' + size_ - 1);
  int row = 0;
  if (text.size() < 2 || !std::isalpha(static_cast<unsigned char>(text[0])) ||
      !ParseInt(text.substr(1), &row) || !std::isdigit(static_cast<unsigned char>(text[1]))) {
    return absl::InvalidArgumentError(absl::StrCat("'", Absl(text), "' is not a cell: expected a",
                                                   "1..", std::string(1, last_column), size_));
  }
  int x = std::tolower(static_cast<unsigned char>(text[0])) - 'a';
  if (x >= size_ || row < 1 || row > size_) {
    return absl::InvalidArgumentError(absl::StrCat("'", Absl(text), "' is off the ", size_, "x",
                                                   size_, " board: expected a1..",
                                                   std::string(1, last_column), size_));
  }
  Move cell = CellAt(x, size_ - row);
  if (board_[cell] != kEmptyCell) {
    return absl::FailedPreconditionError(absl::StrCat(MoveToText(cell), " is already taken"));
  }
  return cell;
}

std::string Gomoku::Render() const {
  std::string letters = "   ";
  for (int x = 0; x < size_; ++x) {
    letters += ' ';
    letters += static_cast<char>('a' + x);
  }
  std::string out = letters + "\n";
  for (int y = 0; y < size_; ++y) {
    std::string row = std::to_string(size_ - y);
    out += std::string(3 - row.size(), ' ') + row;
    for (int x = 0; x < size_; ++x) {
      int s = StoneAt(x, y);
      out += ' ';
      out += s == 0 ? 'X' : s == 1 ? 'O' : '.';
    }
    out += ' ' + row + '\n';
  }
  out += letters;
  out += exact_ ? "   (exact five)\n" : "\n";
  return out;
}

}  // namespace ply
