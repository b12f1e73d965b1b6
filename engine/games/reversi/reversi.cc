#include "engine/games/reversi/reversi.h"

#include <algorithm>
#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/core/random.h"
#include "engine/core/text.h"
#include "engine/games/reversi/bitboard8.h"

namespace ply {

using reversi::Any;
using reversi::Bits256;
using reversi::PopCount;

namespace {

// Zobrist keys: one per (side, cell) and one for White to move. The same for every board shape;
// a per-variant salt keeps positions of different shapes apart in a shared table.
constexpr int kSideKeyIndex = 2 * Reversi::kMaxCells;
constexpr std::array<uint64_t, kSideKeyIndex + 1> MakeKeys() {
  std::array<uint64_t, kSideKeyIndex + 1> keys{};
  for (int i = 0; i <= kSideKeyIndex; ++i) keys[i] = ZobristKey(0x5e7e'451ULL, i);
  return keys;
}
constexpr std::array<uint64_t, kSideKeyIndex + 1> kKeys = MakeKeys();

uint64_t DiscKey(int side, int cell) { return kKeys[side * Reversi::kMaxCells + cell]; }
// Turning a disc over swaps its key for the other side's.
uint64_t FlipKey(int cell) { return kKeys[cell] ^ kKeys[Reversi::kMaxCells + cell]; }
constexpr uint64_t kSideKey = kKeys[kSideKeyIndex];

// Positional weights by ring: corners high, edges positive, the ring next to the edge negative.
// X-squares (diagonal to a corner) and C-squares (next to a corner on the edge) cost extra while
// their corner is empty: they hand the corner to the opponent.
constexpr int kCornerWeight = 40;
constexpr int kEdgeWeight = 6;
constexpr int kRingWeight = -3;
constexpr int kInnerWeight = 1;
constexpr int kXSquarePenalty = 30;
constexpr int kCSquarePenalty = 15;
constexpr int kMobilityWeight = 12;
constexpr int kStableWeight = 10;

// Parses a cell name (`d3`, `D3`) on a width x height board; -1 when it is not one.
int ParseCell(std::string_view text, int width, int height) {
  if (text.size() < 2 || text.size() > 3) return -1;
  char letter = absl::ascii_tolower(static_cast<unsigned char>(text[0]));
  int column = letter - 'a';
  int row = 0;
  if (column < 0 || column >= width) return -1;
  for (char c : text.substr(1)) {
    if (c < '0' || c > '9') return -1;
    row = row * 10 + (c - '0');
  }
  if (row < 1 || row > height || text[1] == '0') return -1;
  return (row - 1) * width + column;
}

// The default width and height, written once: OptionInfos publishes it and EvenSize applies it
// (no walls by default).
constexpr int kDefaultSide = 8;

absl::StatusOr<int> EvenSize(const GameOptions& options, std::string_view name) {
  absl::StatusOr<int> v = IntOption(options, name, kDefaultSide, 4, Reversi::kMaxSide);
  if (!v.ok()) return v.status();
  if (*v % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("option ", Absl(name), "=", *v, " must be even (4, 6, ..., 16)"));
  }
  return *v;
}

}  // namespace

Reversi::Reversi(int width, int height, const std::vector<int>& walls)
    : width_(width),
      height_(height),
      small_(width * height <= 64),
      fast8_(width == 8 && height == 8) {
  for (int w : walls) walls_ |= CellBits(w);
  uint64_t salt = (static_cast<uint64_t>(width) << 8) ^ static_cast<uint64_t>(height);
  for (int w : walls) salt = Mix64(salt ^ static_cast<uint64_t>(w));
  salt_ = Mix64(salt ^ 0x4e7e451ULL);

  // Geometry for both set types; only the one matching the board size is used.
  constexpr int kDc[8] = {1, -1, 0, 0, 1, -1, -1, 1};
  constexpr int kDr[8] = {0, 0, 1, -1, 1, -1, 1, -1};
  Bits256 board;
  Bits256 keep[8];
  for (int cell = 0; cell < cells(); ++cell) {
    if (IsWall(cell)) continue;
    const Bits256 bit = CellBits(cell);
    board |= bit;
    const int c = cell % width_;
    for (int d = 0; d < 8; ++d) {
      if ((kDc[d] == 1 && c == 0) || (kDc[d] == -1 && c == width_ - 1)) continue;
      keep[d] |= bit;
    }
  }
  g256_.board = board;
  g64_.board = board.w[0];
  for (int d = 0; d < 8; ++d) {
    g256_.keep[d] = keep[d];
    g64_.keep[d] = keep[d].w[0];
    g256_.shift[d] = g64_.shift[d] = kDr[d] * width_ + kDc[d];
  }
  g256_.run = g64_.run = std::max(width_, height_) - 2;

  // Evaluation tables.
  const int weights[kClasses] = {kCornerWeight, kEdgeWeight, kRingWeight, kInnerWeight};
  for (int k = 0; k < kClasses; ++k) class_weight_[k] = weights[k];
  for (int cell = 0; cell < cells(); ++cell) {
    if (IsWall(cell)) continue;
    const int r = cell / width_, c = cell % width_;
    const int dr = std::min(r, height_ - 1 - r), dc = std::min(c, width_ - 1 - c);
    const int k = (dr == 0 && dc == 0)   ? 0
                  : (dr == 0 || dc == 0) ? 1
                  : (dr == 1 || dc == 1) ? 2
                                         : 3;
    class_mask_[k] |= CellBits(cell);
  }
  for (int i = 0; i < 4; ++i) {
    const int r = (i & 2) ? height_ - 1 : 0, c = (i & 1) ? width_ - 1 : 0;
    const int step_r = (i & 2) ? -1 : 1, step_c = (i & 1) ? -1 : 1;
    const int corner = r * width_ + c;
    corner_[i] = IsWall(corner) ? -1 : corner;
    const auto add = [&](Bits256& set, int rr, int cc) {
      const int cell = rr * width_ + cc;
      if (!IsWall(cell)) set |= CellBits(cell);
    };
    add(x_square_[i], r + step_r, c + step_c);
    add(c_squares_[i], r + step_r, c);
    add(c_squares_[i], r, c + step_c);
    edge_step_[i][0] = step_c;
    edge_length_[i][0] = width_ - 1;
    edge_step_[i][1] = step_r * width_;
    edge_length_[i][1] = height_ - 1;
  }
}

std::vector<OptionInfo> Reversi::OptionInfos() {
  return {
      {"width", absl::StrCat(kDefaultSide), "number of columns, even, 4..16"},
      {"height", absl::StrCat(kDefaultSide), "number of rows, even, 4..16"},
      {"walls", "",
       "blocked cells, never playable and never flanked through, e.g. c3+f6 (separated by '+', "
       "';', ':' or spaces); the four centre cells cannot be walls"},
  };
}

std::vector<Difficulty> Reversi::Levels() {
  std::vector<Difficulty> levels = LevelsWithPerfect(/*perfect_time_ms=*/5000);
  for (Difficulty& d : levels) {
    if (d.name == "medium") d.max_depth = 6;
    // Hard also tries the exact endgame solver (Reversi::Solve) once few enough cells are
    // empty, and searches when that does not fit the budget.
    // Tuned on the rating ladder (games/reversi/ladder.txt): with a second a move hard stood
    // 82 points below perfect's five; with half a second it keeps 100 apart.
    if (d.name == "hard") {
      d.perfect = true;
      d.time_ms = 500;
      d.description = "full strength within half a second a move; plays the endgame perfectly";
    }
  }
  return levels;
}

absl::StatusOr<Reversi> Reversi::CreateEmpty(const GameOptions& options) {
  absl::StatusOr<int> width = EvenSize(options, "width");
  if (!width.ok()) return width.status();
  absl::StatusOr<int> height = EvenSize(options, "height");
  if (!height.ok()) return height.status();
  std::vector<int> walls;
  if (auto it = options.find("walls"); it != options.end()) {
    for (absl::string_view item :
         absl::StrSplit(it->second, absl::ByAnyChar("+;:, |/"), absl::SkipEmpty())) {
      int cell = ParseCell(Std(item), *width, *height);
      if (cell < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("wall '", item, "' is not a cell of a ", *width, "x", *height, " board"));
      }
      walls.push_back(cell);
    }
  }
  std::sort(walls.begin(), walls.end());
  walls.erase(std::unique(walls.begin(), walls.end()), walls.end());
  return Reversi(*width, *height, walls);
}

absl::StatusOr<Reversi> Reversi::Create(const GameOptions& options) {
  absl::StatusOr<Reversi> game = CreateEmpty(options);
  if (!game.ok()) return game.status();
  Reversi& g = *game;
  const int r = g.height_ / 2 - 1, c = g.width_ / 2 - 1;
  const int white[2] = {r * g.width_ + c, (r + 1) * g.width_ + c + 1};
  const int black[2] = {r * g.width_ + c + 1, (r + 1) * g.width_ + c};
  for (int i = 0; i < 2; ++i) {
    for (int cell : {white[i], black[i]}) {
      if (g.IsWall(cell)) {
        return absl::InvalidArgumentError(
            absl::StrCat("wall ", g.CellName(cell), " is on a starting disc"));
      }
    }
    g.discs_[1] |= CellBits(white[i]);
    g.discs_[0] |= CellBits(black[i]);
  }
  g.hash_ = g.ComputeHash();
  g.UpdateMoves();
  return game;
}

absl::StatusOr<Reversi> Reversi::FromCells(const GameOptions& options, std::string_view cells,
                                           Player to_move) {
  absl::StatusOr<Reversi> shape = CreateEmpty(options);
  if (!shape.ok()) return shape.status();
  std::string text;
  for (char ch : cells) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(ch))) text += ch;
  }
  if (static_cast<int>(text.size()) != shape->cells()) {
    return absl::InvalidArgumentError(absl::StrCat("a ", shape->width_, "x", shape->height_,
                                                   " position needs ", shape->cells(),
                                                   " cells, not ", text.size()));
  }
  std::vector<int> walls;
  Bits256 discs[2];
  for (int cell = 0; cell < shape->cells(); ++cell) {
    switch (text[cell]) {
      case 'X':
      case 'x':
      case '*':
      case 'B':
        discs[0] |= CellBits(cell);
        break;
      case 'O':
      case 'o':
      case 'W':
        discs[1] |= CellBits(cell);
        break;
      case '-':
      case '.':
        break;
      case '#':
        walls.push_back(cell);
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat("'", std::string(1, text[cell]),
                                                       "' is not a cell: expected X, O, - or #"));
    }
    if (shape->IsWall(cell) && text[cell] != '-' && text[cell] != '.' && text[cell] != '#') {
      return absl::InvalidArgumentError(absl::StrCat("a disc on the wall ", shape->CellName(cell)));
    }
  }
  for (int cell = 0; cell < shape->cells(); ++cell) {
    if (shape->IsWall(cell)) walls.push_back(cell);
  }
  std::sort(walls.begin(), walls.end());
  walls.erase(std::unique(walls.begin(), walls.end()), walls.end());
  Reversi g(shape->width_, shape->height_, walls);
  g.discs_[0] = discs[0];
  g.discs_[1] = discs[1];
  g.side_ = to_move & 1;
  g.hash_ = g.ComputeHash();
  g.UpdateMoves();
  return g;
}

GameOptions Reversi::EffectiveOptions() const {
  GameOptions options = {{"width", std::to_string(width_)}, {"height", std::to_string(height_)}};
  std::vector<std::string> walls;
  reversi::ForEachBit(walls_, [&](int cell) { walls.push_back(CellName(cell)); });
  if (!walls.empty()) options["walls"] = absl::StrJoin(walls, "+");
  return options;
}

template <class B>
B Reversi::MovesOf(const B& own, const B& opp) const {
  const reversi::Geometry<B>& geo = Geo<B>();
  const B empty = geo.board & ~(own | opp);
  if constexpr (std::is_same_v<B, uint64_t>) {
    if (fast8_) return reversi8::Moves(own, opp, empty);
  }
  // Kogge-Stone fill per direction: `pro` starts as the opponent's discs that can be entered
  // from their neighbour against the direction (the masks in `keep` stop wrap-around and walls)
  // and then holds the ends of chains of 2, 4, 8 such discs, so a run of up to 15 discs takes
  // four steps instead of fifteen.
  B moves{};
  for (int d = 0; d < 8; ++d) {
    const int s = geo.shift[d];
    const auto raw = [s](const B& b, int times) {
      return s > 0 ? reversi::ShiftUp(b, s * times) : reversi::ShiftDown(b, -s * times);
    };
    B pro = opp & geo.keep[d];
    B gen = own;
    for (int step = 1;; step *= 2) {
      gen |= pro & raw(gen, step);
      if (2 * step - 1 >= geo.run) break;
      pro &= raw(pro, step);
    }
    moves |= geo.Shift(gen & opp, d);
  }
  return moves & empty;
}

template <class B>
B Reversi::FlipsOf(const B& own, const B& opp, int cell) const {
  if constexpr (std::is_same_v<B, uint64_t>) {
    if (fast8_) return reversi8::Flips(own, opp, cell);
  }
  const reversi::Geometry<B>& geo = Geo<B>();
  const B bit = reversi::CellBit<B>(cell);
  B flips{};
  for (int d = 0; d < 8; ++d) {
    B line{};
    B x = geo.Shift(bit, d);
    while (Any(x & opp)) {
      line |= x;
      x = geo.Shift(x, d);
    }
    if (Any(x & own)) flips |= line;
  }
  return flips;
}

void Reversi::UpdateMoves() {
  if (small_) {
    const uint64_t own = discs_[side_].w[0], opp = discs_[side_ ^ 1].w[0];
    moves_.w[0] = MovesOf<uint64_t>(own, opp);
    over_ = moves_.w[0] == 0 && MovesOf<uint64_t>(opp, own) == 0;
  } else {
    moves_ = MovesOf<Bits256>(discs_[side_], discs_[side_ ^ 1]);
    over_ = !Any(moves_) && !Any(MovesOf<Bits256>(discs_[side_ ^ 1], discs_[side_]));
  }
}

template <class B>
void Reversi::MakeT(Move m, UndoInfo& undo) {
  undo.moves = moves_;
  undo.hash = hash_;
  hash_ ^= kSideKey;
  if (m == kPass) {
    As<B>(undo.flips) = B{};
    side_ ^= 1;
    UpdateMoves();
    return;
  }
  B& own = As<B>(discs_[side_]);
  B& opp = As<B>(discs_[side_ ^ 1]);
  const B flips = FlipsOf<B>(own, opp, m);
  As<B>(undo.flips) = flips;
  own |= flips | reversi::CellBit<B>(m);
  opp ^= flips;
  uint64_t h = hash_ ^ DiscKey(side_, m);
  reversi::ForEachBit(flips, [&h](int cell) { h ^= FlipKey(cell); });
  hash_ = h;
  side_ ^= 1;
  UpdateMoves();
}

void Reversi::Make(Move m, UndoInfo& undo) {
  if (small_) {
    MakeT<uint64_t>(m, undo);
  } else {
    MakeT<Bits256>(m, undo);
  }
}

uint64_t Reversi::ComputeHash() const {
  uint64_t h = salt_ ^ (side_ == 1 ? kSideKey : 0);
  for (int p = 0; p < 2; ++p) {
    reversi::ForEachBit(discs_[p], [&](int cell) { h ^= DiscKey(p, cell); });
  }
  return h;
}

GameStatus Reversi::Status() const {
  if (!over_) return {};
  const int black = PopCount(discs_[0]);
  const int white = PopCount(discs_[1]);
  return {.over = true,
          .winner = black > white   ? 0
                    : black < white ? 1
                                    : -1,
          .reason = Empties() == 0 ? "the board is full" : "neither side can move",
          .points = {black, white},
          .margin = black > white   ? black - white + Empties()
                    : black < white ? black - white - Empties()
                                    : 0};
}

int Reversi::EdgeStable(Player p) const {
  const Bits256& mine = discs_[p];
  int stable = 0;
  for (int i = 0; i < 4; ++i) {
    const int corner = corner_[i];
    if (corner < 0 || !reversi::Test(mine, corner)) continue;
    ++stable;
    for (int j = 0; j < 2; ++j) {
      int cell = corner;
      for (int n = 0; n < edge_length_[i][j]; ++n) {
        cell += edge_step_[i][j];
        if (!reversi::Test(mine, cell)) break;
        ++stable;
      }
    }
  }
  return stable;
}

template <class B>
Score Reversi::EvaluateT() const {
  const B& own = As<B>(discs_[side_]);
  const B& opp = As<B>(discs_[side_ ^ 1]);
  const auto diff = [&](const B& mask) { return PopCount(own & mask) - PopCount(opp & mask); };
  const int own_count = PopCount(own), opp_count = PopCount(opp);
  if (over_) return std::clamp((own_count - opp_count) * 100, -kMaxEval, kMaxEval);

  int score = kMobilityWeight * (PopCount(As<B>(moves_)) - PopCount(MovesOf<B>(opp, own)));
  for (int k = 0; k < kClasses; ++k) score += class_weight_[k] * diff(As<B>(class_mask_[k]));
  const B occupied = own | opp;
  for (int i = 0; i < 4; ++i) {
    if (corner_[i] < 0 || reversi::Test(occupied, corner_[i])) continue;
    score -=
        kXSquarePenalty * diff(As<B>(x_square_[i])) + kCSquarePenalty * diff(As<B>(c_squares_[i]));
  }
  score += kStableWeight * (EdgeStable(side_) - EdgeStable(side_ ^ 1));
  // Discs only count near the end: earlier, having few is often an advantage (mobility).
  const int empties = Empties();
  const int late = std::max(10, cells() / 6);
  if (empties <= late) score += (late - empties + 1) * 4 * (own_count - opp_count);
  return std::clamp(score, -kMaxEval, kMaxEval);
}

Score Reversi::Evaluate() const { return small_ ? EvaluateT<uint64_t>() : EvaluateT<Bits256>(); }

template <class B>
int Reversi::MoveOrderScoreT(Move m) const {
  const B& own = As<B>(discs_[side_]);
  const B& opp = As<B>(discs_[side_ ^ 1]);
  const B flips = FlipsOf<B>(own, opp, m);
  const B bit = reversi::CellBit<B>(m);
  // Counting the replies is a full move generation per move: worth it on boards of one word,
  // too slow on the large ones, which go by the table alone.
  const int opp_mobility = small_ ? PopCount(MovesOf<B>(opp ^ flips, own | flips | bit)) : 0;
  int weight = 0;
  for (int k = 0; k < kClasses; ++k) {
    if (Any(As<B>(class_mask_[k]) & bit)) weight = class_weight_[k];
  }
  const B occupied = own | opp;
  for (int i = 0; i < 4; ++i) {
    if (corner_[i] < 0 || reversi::Test(occupied, corner_[i])) continue;
    if (Any(As<B>(x_square_[i]) & bit)) weight -= kXSquarePenalty;
    if (Any(As<B>(c_squares_[i]) & bit)) weight -= kCSquarePenalty;
  }
  const int corner_bonus = weight >= kCornerWeight ? 1'000'000 : 0;
  return corner_bonus + 300'000 + 2'000 * weight - 4'000 * opp_mobility;
}

int Reversi::MoveOrderScore(Move m) const {
  if (m == kPass) return 0;
  return small_ ? MoveOrderScoreT<uint64_t>(m) : MoveOrderScoreT<Bits256>(m);
}

std::string Reversi::CellName(int cell) const {
  return absl::StrCat(std::string(1, static_cast<char>('a' + cell % width_)), cell / width_ + 1);
}

std::string Reversi::MoveToText(Move m) const { return m == kPass ? "pass" : CellName(m); }

absl::StatusOr<Reversi::Move> Reversi::ParseMove(std::string_view text) const {
  text = Trim(text);
  const std::string lower = absl::AsciiStrToLower(Absl(text));
  const bool is_pass = lower == "pass";
  const int cell = is_pass ? -1 : ParseCell(lower, width_, height_);
  if (!is_pass && cell < 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", Absl(text),
                                                   "' is not a move: expected a cell from a1 to ",
                                                   CellName(cells() - 1), " or pass"));
  }
  if (over_) return absl::FailedPreconditionError("the game is over");
  const bool can_move = Any(moves_);
  if (is_pass) {
    if (can_move) {
      int first = -1;
      reversi::ForEachBit(moves_, [&](int c) { first = first < 0 ? c : first; });
      return absl::FailedPreconditionError(absl::StrCat(
          "you may only pass without a legal move, and you have one (e.g. ", CellName(first), ")"));
    }
    return kPass;
  }
  const std::string name = CellName(cell);
  if (IsWall(cell)) return absl::FailedPreconditionError(absl::StrCat(name, " is a wall"));
  if (reversi::Test(discs_[0] | discs_[1], cell)) {
    return absl::FailedPreconditionError(absl::StrCat(name, " is not empty"));
  }
  if (!can_move) {
    return absl::FailedPreconditionError("you have no legal move and must pass");
  }
  if (!reversi::Test(moves_, cell)) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " does not outflank any disc, so it is not a legal move"));
  }
  return static_cast<Move>(cell);
}

std::string Reversi::Render() const {
  std::string header = "   ";
  for (int c = 0; c < width_; ++c) absl::StrAppend(&header, " ", std::string(1, 'a' + c));
  std::string out = header + "\n";
  for (int r = 0; r < height_; ++r) {
    absl::StrAppend(&out, r + 1 < 10 ? "  " : " ", r + 1);
    for (int c = 0; c < width_; ++c) {
      const int cell = r * width_ + c;
      const char ch = IsWall(cell)                     ? '#'
                      : reversi::Test(discs_[0], cell) ? 'X'
                      : reversi::Test(discs_[1], cell) ? 'O'
                                                       : '.';
      absl::StrAppend(&out, " ", std::string(1, ch));
    }
    absl::StrAppend(&out, "  ", r + 1, "\n");
  }
  absl::StrAppend(&out, header, "\n");
  absl::StrAppend(&out, "Black (X) ", PopCount(discs_[0]), ", White (O) ", PopCount(discs_[1]));
  if (over_) {
    absl::StrAppend(&out, "; game over\n");
  } else {
    absl::StrAppend(&out, "; ", side_ == 0 ? "Black" : "White", " to move",
                    Any(moves_) ? "" : " (must pass)", "\n");
  }
  return out;
}

}  // namespace ply
