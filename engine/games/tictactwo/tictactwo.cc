#include "engine/games/tictactwo/tictactwo.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/core/random.h"
#include "engine/core/text.h"

namespace ply {
namespace {

constexpr const char* kDirNames[8] = {"n", "ne", "e", "se", "s", "sw", "w", "nw"};

struct Preset {
  const char* name;
  int board, grid, line, pieces;
};
// The first preset gives the defaults of board, grid, line and pieces; with kDefaultUnlock and
// kDefaultMaxPlies every option default is written here once (OptionInfos publishes them and
// Create applies them).
constexpr Preset kPresets[] = {{"classic", 5, 3, 3, 4}, {"big", 7, 4, 4, 6}};
constexpr int kDefaultUnlock = 2;
constexpr int kDefaultMaxPlies = 100;

constexpr uint64_t Bit(int cell) { return uint64_t{1} << cell; }

}  // namespace

TicTacTwo::TicTacTwo(int board, int grid, int line, int pieces, int unlock, int max_plies)
    : n_(board),
      g_(grid),
      line_(line),
      max_pieces_(pieces),
      unlock_(unlock),
      max_plies_(max_plies),
      num_lines_(0),
      lines_{},
      lines_through_{},
      grid_at_zero_(0),
      centre_at_zero_(0) {
  for (int r = 0; r < g_; ++r) {
    for (int c = 0; c < g_; ++c) grid_at_zero_ |= Bit(r * n_ + c);
  }
  // Every run of `line` cells in a row, column or diagonal of the grid at origin 0.
  const int dr[4] = {0, 1, 1, 1};
  const int dc[4] = {1, 0, 1, -1};
  for (int d = 0; d < 4; ++d) {
    for (int r = 0; r < g_; ++r) {
      for (int c = 0; c < g_; ++c) {
        int er = r + dr[d] * (line_ - 1), ec = c + dc[d] * (line_ - 1);
        if (er < 0 || er >= g_ || ec < 0 || ec >= g_) continue;
        uint64_t mask = 0;
        for (int i = 0; i < line_; ++i) mask |= Bit((r + dr[d] * i) * n_ + c + dc[d] * i);
        for (uint64_t b = mask; b != 0; b &= b - 1) {
          lines_through_[std::countr_zero(b)] |= uint64_t{1} << num_lines_;
        }
        lines_[num_lines_++] = mask;
      }
    }
  }
  const int centre_lo = (g_ - 1) / 2, centre_hi = g_ / 2;
  for (int r = centre_lo; r <= centre_hi; ++r) {
    for (int c = centre_lo; c <= centre_hi; ++c) centre_at_zero_ |= Bit(r * n_ + c);
  }
  salt_ = Mix64(0x7272'0000ULL ^ static_cast<uint64_t>(board) << 24 ^
                static_cast<uint64_t>(grid) << 16 ^ static_cast<uint64_t>(line) << 8 ^
                static_cast<uint64_t>(pieces));
  grid_origin_ = (n_ - g_) / 2 * n_ + (n_ - g_) / 2;
  grid_mask_ = grid_at_zero_ << grid_origin_;
  repetition_keys_[2] = ZobristKey(salt_, 193);
  repetition_keys_[3] = ZobristKey(salt_, 194);
  hash_ = PositionHash();
  hashes_[0] = hash_;
}

std::vector<OptionInfo> TicTacTwo::OptionInfos() {
  return {
      {"preset", kPresets[0].name,
       "classic (5x5 board, 3x3 grid, 3 in a row, 4 pieces) or big (7x7, 4x4, 4 in a row, 6 "
       "pieces); the options below override it"},
      {"board", absl::StrCat(kPresets[0].board), "board size, 4..8"},
      {"grid", absl::StrCat(kPresets[0].grid), "size of the movable grid, 3..min(board, 5)"},
      {"line", absl::StrCat(kPresets[0].line),
       "pieces in a row (inside the grid) that win, 3..grid"},
      {"pieces", absl::StrCat(kPresets[0].pieces), "pieces per player, line..(grid*grid-1)/2"},
      {"unlock", absl::StrCat(kDefaultUnlock),
       "grid and piece moves are allowed once each player has placed this many pieces"},
      {"max_plies", absl::StrCat(kDefaultMaxPlies),
       "the game is drawn after this many plies, 20..250"},
  };
}

std::vector<Difficulty> TicTacTwo::Levels() {
  std::vector<Difficulty> levels = DefaultLevels();
  // Tuned on the rating ladder (games/tictactwo/ladder.txt) to stand 100 points apart: at
  // seven plies medium drew or split its games with hard (+7 =6 -7), the game being drawish
  // between good players; each level below hard now looks less far or errs more often.
  for (Difficulty& d : levels) {
    if (d.name == "beginner") d.random_move_chance = 0.5;
    if (d.name == "easy") d.max_depth = 2;
    if (d.name == "medium") {
      d.max_depth = 3;
      d.random_move_chance = 0.05;
    }
  }
  return levels;
}

absl::StatusOr<TicTacTwo> TicTacTwo::Create(const GameOptions& options) {
  absl::StatusOr<std::string> preset_name =
      ChoiceOption(options, "preset", kPresets[0].name, {kPresets[0].name, kPresets[1].name});
  if (!preset_name.ok()) return preset_name.status();
  const Preset& preset = *std::find_if(std::begin(kPresets), std::end(kPresets),
                                       [&](const Preset& p) { return *preset_name == p.name; });
  absl::StatusOr<int> board = IntOption(options, "board", preset.board, 4, kMaxBoard);
  if (!board.ok()) return board.status();
  absl::StatusOr<int> grid =
      IntOption(options, "grid", std::min(preset.grid, *board), 3, std::min(*board, kMaxGrid));
  if (!grid.ok()) return grid.status();
  absl::StatusOr<int> line = IntOption(options, "line", std::min(preset.line, *grid), 3, *grid);
  if (!line.ok()) return line.status();
  const int most_pieces = (*grid * *grid - 1) / 2;
  absl::StatusOr<int> pieces = IntOption(
      options, "pieces", std::clamp(preset.pieces, *line, most_pieces), *line, most_pieces);
  if (!pieces.ok()) return pieces.status();
  absl::StatusOr<int> unlock =
      IntOption(options, "unlock", std::min(kDefaultUnlock, *pieces), 1, *pieces);
  if (!unlock.ok()) return unlock.status();
  absl::StatusOr<int> max_plies =
      IntOption(options, "max_plies", kDefaultMaxPlies, 20, kMaxPlyLimit);
  if (!max_plies.ok()) return max_plies.status();
  return TicTacTwo(*board, *grid, *line, *pieces, *unlock, *max_plies);
}

GameOptions TicTacTwo::EffectiveOptions() const {
  return {{"board", std::to_string(n_)},       {"grid", std::to_string(g_)},
          {"line", std::to_string(line_)},     {"pieces", std::to_string(max_pieces_)},
          {"unlock", std::to_string(unlock_)}, {"max_plies", std::to_string(max_plies_)}};
}

uint64_t TicTacTwo::PieceKey(int player, int cell) const {
  return ZobristKey(salt_, static_cast<uint64_t>(player * 64 + cell));
}
uint64_t TicTacTwo::GridKey(int origin) const {
  return ZobristKey(salt_, static_cast<uint64_t>(128 + origin));
}
uint64_t TicTacTwo::SideKey() const { return ZobristKey(salt_, 192); }

uint64_t TicTacTwo::PositionHash() const {
  uint64_t h = GridKey(grid_origin_);
  for (int p = 0; p < 2; ++p) {
    for (uint64_t b = pieces_[p]; b != 0; b &= b - 1) h ^= PieceKey(p, std::countr_zero(b));
  }
  if (SideToMove() == 1) h ^= SideKey();
  return h;
}

uint64_t TicTacTwo::ComputeHash() const {
  int seen = 0;
  const uint64_t h = PositionHash();
  for (int i = ply_; i >= last_placement_ply_; i -= 2) seen += hashes_[i] == h;
  return h ^ repetition_keys_[std::min(seen, 3)];
}

bool TicTacTwo::HasLine(uint64_t stones, int origin) const {
  const uint64_t inside = stones & (grid_at_zero_ << origin);
  if (std::popcount(inside) < line_) return false;
  for (int i = 0; i < num_lines_; ++i) {
    const uint64_t l = lines_[i] << origin;
    if ((inside & l) == l) return true;
  }
  return false;
}

int TicTacTwo::GridOriginAfter(int direction) const {
  const int r = grid_origin_ / n_ + kDirRow[direction];
  const int c = grid_origin_ % n_ + kDirCol[direction];
  if (r < 0 || c < 0 || r + g_ > n_ || c + g_ > n_) return -1;
  return r * n_ + c;
}

void TicTacTwo::GenerateMoves(MoveList<Move, kMaxMoves>& moves) const {
  const uint64_t mine = pieces_[SideToMove()];
  const uint64_t empty = grid_mask_ & ~(pieces_[0] | pieces_[1]);
  if (std::popcount(mine) < max_pieces_) {
    for (uint64_t e = empty; e != 0; e &= e - 1) moves.push_back(PlaceMove(std::countr_zero(e)));
  }
  if (!Unlocked()) return;
  for (uint64_t f = mine; f != 0; f &= f - 1) {
    const int from = std::countr_zero(f);
    for (uint64_t e = empty; e != 0; e &= e - 1) {
      moves.push_back(StepMove(from, std::countr_zero(e)));
    }
  }
  for (int d = 0; d < 8; ++d) {
    if (GridOriginAfter(d) >= 0) moves.push_back(GridMove(d));
  }
}

void TicTacTwo::Make(Move m, UndoInfo& undo) {
  const int me = SideToMove();
  undo.last_placement_ply = static_cast<uint8_t>(last_placement_ply_);
  const int to = To(m);
  switch (KindOf(m)) {
    case kPlace:
      pieces_[me] |= Bit(to);
      hash_ ^= PieceKey(me, to);
      last_placement_ply_ = ply_ + 1;
      break;
    case kStep:
      pieces_[me] ^= Bit(From(m)) | Bit(to);
      hash_ ^= PieceKey(me, From(m)) ^ PieceKey(me, to);
      break;
    case kGrid: {
      const int origin = GridOriginAfter(to);
      hash_ ^= GridKey(grid_origin_) ^ GridKey(origin);
      grid_origin_ = origin;
      grid_mask_ = grid_at_zero_ << origin;
      break;
    }
  }
  hash_ ^= SideKey();
  ++ply_;
  hashes_[ply_] = hash_;
  undo.repetitions = static_cast<uint8_t>(repetitions_);
  repetitions_ = CountRepetitions();

  if (HasLine(pieces_[me], grid_origin_)) {
    winner_ = me;
  } else if (KindOf(m) == kGrid && HasLine(pieces_[1 - me], grid_origin_)) {
    winner_ = 1 - me;
  } else if (repetitions_ >= 3) {
    end_ = End::kRepetition;
  } else if (ply_ >= max_plies_) {
    end_ = End::kMoveLimit;
  }
}

int TicTacTwo::CountRepetitions() const {
  // Positions with the same side to move lie an even number of plies apart, and none before
  // the last placement can come back.
  int seen = 1;
  for (int i = ply_ - 2; i >= last_placement_ply_ && seen < 3; i -= 2) {
    seen += hashes_[i] == hash_;
  }
  return seen;
}

void TicTacTwo::Unmake(Move m, const UndoInfo& undo) {
  hashes_[ply_] = 0;
  --ply_;
  repetitions_ = undo.repetitions;
  winner_ = -1;
  end_ = End::kNone;
  last_placement_ply_ = undo.last_placement_ply;
  hash_ ^= SideKey();
  const int me = SideToMove();
  const int to = To(m);
  switch (KindOf(m)) {
    case kPlace:
      pieces_[me] &= ~Bit(to);
      hash_ ^= PieceKey(me, to);
      break;
    case kStep:
      pieces_[me] ^= Bit(From(m)) | Bit(to);
      hash_ ^= PieceKey(me, From(m)) ^ PieceKey(me, to);
      break;
    case kGrid: {
      const int origin = grid_origin_ - kDirRow[to] * n_ - kDirCol[to];
      hash_ ^= GridKey(grid_origin_) ^ GridKey(origin);
      grid_origin_ = origin;
      grid_mask_ = grid_at_zero_ << origin;
      break;
    }
  }
}

Score TicTacTwo::Evaluate() const {
  const int me = SideToMove();
  const uint64_t mine = pieces_[me] & grid_mask_;
  const uint64_t theirs = pieces_[1 - me] & grid_mask_;
  const uint64_t empty = grid_mask_ & ~(pieces_[0] | pieces_[1]);
  // Open lines inside the grid, worth more the fuller they are. A line one piece short that
  // the side to move can complete now is nearly a win; the opponent's such lines are threats.
  Score score = 0;
  int my_threats = 0, their_threats = 0;
  for (int i = 0; i < num_lines_; ++i) {
    const uint64_t l = lines_[i] << grid_origin_;
    const int a = std::popcount(mine & l), b = std::popcount(theirs & l);
    if (b == 0 && a > 0) {
      score += 1 << (2 * a);
      my_threats += a == line_ - 1;
    } else if (a == 0 && b > 0) {
      score -= 1 << (2 * b);
      their_threats += b == line_ - 1;
    }
  }
  const bool i_can_fill = empty != 0 && (std::popcount(pieces_[me]) < max_pieces_ || Unlocked());
  if (my_threats > 0 && i_can_fill) score += 400;
  score -= 60 * their_threats;
  // Pieces inside the grid, and above all at its centre, take part in the most lines.
  const uint64_t centre = centre_at_zero_ << grid_origin_;
  score += 6 * (std::popcount(pieces_[me] & centre) - std::popcount(pieces_[1 - me] & centre));
  score += 4 * (std::popcount(mine) - std::popcount(theirs));
  return score;
}

int TicTacTwo::MoveOrderScore(Move m) const {
  const int me = SideToMove();
  const uint64_t theirs = pieces_[1 - me];
  if (KindOf(m) == kGrid) {
    const int origin = GridOriginAfter(To(m));
    if (HasLine(pieces_[me], origin)) return 2'000'000;
    if (HasLine(theirs, origin)) return 0;
    return 50'000;
  }
  const int to = To(m);
  uint64_t mine = pieces_[me] | Bit(to);
  if (KindOf(m) == kStep) mine &= ~Bit(From(m));
  int score = KindOf(m) == kPlace ? 100'000 : 0;
  for (uint64_t ls = lines_through_[to - grid_origin_]; ls != 0; ls &= ls - 1) {
    const uint64_t l = lines_[std::countr_zero(ls)] << grid_origin_;
    if ((mine & l) == l) return 2'000'000;
    const int b = std::popcount(theirs & l);
    if (b == line_ - 1) {
      score += 1'000'000;
    } else if (b == 0) {
      score += 30'000 * std::popcount(mine & l);
    }
  }
  return score;
}

GameStatus TicTacTwo::Status() const {
  if (winner_ >= 0) return {.over = true, .winner = winner_, .reason = "a line inside the grid"};
  switch (end_) {
    case End::kRepetition:
      return {.over = true, .winner = -1, .reason = "threefold repetition"};
    case End::kMoveLimit:
      return {.over = true, .winner = -1, .reason = "move limit"};
    default:
      return {};
  }
}

namespace {

std::string CellText(int cell, int n) {
  return {static_cast<char>('a' + cell % n), static_cast<char>('1' + cell / n)};
}

// A cell like "b2" on an n x n board, or -1.
int ParseCell(std::string_view s, int n) {
  if (s.size() != 2) return -1;
  const int c = s[0] - 'a', r = s[1] - '1';
  if (c < 0 || c >= n || r < 0 || r >= n) return -1;
  return r * n + c;
}

}  // namespace

std::string TicTacTwo::MoveToText(Move m) const {
  switch (KindOf(m)) {
    case kPlace:
      return CellText(To(m), n_);
    case kStep:
      return CellText(From(m), n_) + "-" + CellText(To(m), n_);
    default:
      return absl::StrCat("g:", kDirNames[To(m) & 7]);
  }
}

absl::StatusOr<TicTacTwo::Move> TicTacTwo::ParseMove(std::string_view raw) const {
  const std::string text = absl::AsciiStrToLower(Absl(Trim(raw)));
  const std::string_view t = text;
  const int me = SideToMove();
  const uint64_t occupied = pieces_[0] | pieces_[1];
  const std::string need_unlock = absl::StrCat(
      "grid and piece moves are allowed only after each player has placed ", unlock_, " pieces");

  for (std::string_view prefix : {"g:", "grid:"}) {
    if (!t.starts_with(prefix)) continue;
    const std::string_view dir = Trim(t.substr(prefix.size()));
    for (int d = 0; d < 8; ++d) {
      if (dir != kDirNames[d]) continue;
      if (!Unlocked()) return absl::FailedPreconditionError(need_unlock);
      if (GridOriginAfter(d) < 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("the grid cannot move ", kDirNames[d], ": it would leave the board"));
      }
      return GridMove(d);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "'", Absl(dir), "' is not a direction: expected one of n, ne, e, se, s, sw, w, nw"));
  }

  const std::string last = CellText(n_ * n_ - 1, n_);
  const size_t dash = t.find('-');
  const int to = ParseCell(dash == std::string_view::npos ? t : Trim(t.substr(dash + 1)), n_);
  const int from = dash == std::string_view::npos ? -2 : ParseCell(Trim(t.substr(0, dash)), n_);
  if (to < 0 || from == -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", Absl(Trim(raw)), "' is not a move: expected a cell (a1..", last,
                     "), a piece move (b2-c3) or a grid move (g:n, g:ne, ..., g:nw)"));
  }
  if ((grid_mask_ & Bit(to)) == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(CellText(to, n_), " is outside the grid: pieces go only inside it"));
  }
  if (occupied & Bit(to)) {
    return absl::FailedPreconditionError(absl::StrCat(CellText(to, n_), " is already taken"));
  }
  if (from == -2) {
    if (std::popcount(pieces_[me]) >= max_pieces_) {
      return absl::FailedPreconditionError(
          "you have no pieces left to place: move a piece or the grid");
    }
    return PlaceMove(to);
  }
  if (!Unlocked()) return absl::FailedPreconditionError(need_unlock);
  if ((pieces_[me] & Bit(from)) == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("there is no piece of yours on ", CellText(from, n_)));
  }
  return StepMove(from, to);
}

std::string TicTacTwo::Render() const {
  std::string out = "  ";
  for (int c = 0; c < n_; ++c) {
    out += ' ';
    out += static_cast<char>('a' + c);
  }
  out += '\n';
  const int gr = grid_row(), gc = grid_col();
  for (int r = 0; r < n_; ++r) {
    const bool in_grid_rows = r >= gr && r < gr + g_;
    out += static_cast<char>('1' + r);
    out += ' ';
    for (int c = 0; c < n_; ++c) {
      out += in_grid_rows && c == gc ? '[' : in_grid_rows && c == gc + g_ ? ']' : ' ';
      const uint64_t bit = Bit(r * n_ + c);
      out += (pieces_[0] & bit) ? 'X' : (pieces_[1] & bit) ? 'O' : '.';
    }
    if (in_grid_rows && gc + g_ == n_) out += ']';
    out += '\n';
  }
  absl::StrAppend(&out, "grid ", CellText(grid_origin_, n_), "-",
                  CellText(grid_origin_ + (g_ - 1) * (n_ + 1), n_), ", ",
                  SideToMove() == 0 ? "X" : "O", " to move, in hand X ",
                  max_pieces_ - std::popcount(pieces_[0]), " O ",
                  max_pieces_ - std::popcount(pieces_[1]), "\n");
  return out;
}

}  // namespace ply
