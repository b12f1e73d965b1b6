#include "engine/games/connect4/connect4.h"

#include <chrono>
#include <cstdlib>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/core/random.h"
#include "engine/core/text.h"
#include "engine/games/connect4/book.h"
#include "engine/games/connect4/solver.h"

namespace ply {

Connect4::Connect4(int width, int height, bool cylinder)
    : width_(width), height_(height), cylinder_(cylinder), bits_(width * (height + 1)) {
  board_ = 0;
  odd_rows_ = 0;
  bottom_ = 0;
  for (int c = 0; c < width_; ++c) {
    board_ |= ColumnMask(c);
    bottom_ |= BottomCell(c);
    for (int r = 0; r < height_; r += 2) odd_rows_ |= uint64_t{1} << (c * (height_ + 1) + r);
  }
  salt_ = Mix64(0xc4c4'0000ULL ^ (static_cast<uint64_t>(width) << 16) ^
                (static_cast<uint64_t>(height) << 8) ^ (cylinder ? 1 : 0));
  directions_[0] = 1;            // vertical
  directions_[1] = height_ + 1;  // horizontal
  directions_[2] = height_;      // diagonal, down to the right
  directions_[3] = height_ + 2;  // diagonal, up to the right
  // Centre first, then alternating outwards (left before right).
  int n = 0;
  for (int d = 0; n < width_; ++d) {
    int left = (width_ - 1) / 2 - d;
    int right = width_ / 2 + d;
    if (left >= 0 && (n == 0 || left != column_order_[n - 1])) column_order_[n++] = left;
    if (right < width_ && right != left) column_order_[n++] = right;
  }
  hash_ = ComputeHash();
}

namespace {
// The option defaults, written once: OptionInfos publishes them and Create applies them.
constexpr int kDefaultWidth = 7;
constexpr int kDefaultHeight = 6;
constexpr bool kDefaultCylinder = false;
}  // namespace

std::vector<OptionInfo> Connect4::OptionInfos() {
  return {
      {"width", absl::StrCat(kDefaultWidth), "number of columns, 4..12"},
      {"height", absl::StrCat(kDefaultHeight),
       "number of rows, 4..12; width * (height + 1) must be at most 64"},
      {"cylinder", kDefaultCylinder ? "true" : "false",
       "columns wrap around: lines may cross from the last column to the first"},
  };
}

std::vector<Difficulty> Connect4::Levels() {
  std::vector<Difficulty> levels = LevelsWithPerfect(/*perfect_time_ms=*/5000);
  for (Difficulty& d : levels) {
    if (d.name == "medium") d.max_depth = 8;
    // The evaluation sees a threat that can be filled at once, one ply past the horizon: one
    // ply of search now shows beginner what two did, and easy stays clear of it.
    if (d.name == "beginner") d.max_depth = 1;
  }
  return levels;
}

absl::StatusOr<Connect4> Connect4::Create(const GameOptions& options) {
  absl::StatusOr<int> width = IntOption(options, "width", kDefaultWidth, 4, kMaxWidth);
  if (!width.ok()) return width.status();
  absl::StatusOr<int> height = IntOption(options, "height", kDefaultHeight, 4, 12);
  if (!height.ok()) return height.status();
  absl::StatusOr<bool> cylinder = BoolOption(options, "cylinder", kDefaultCylinder);
  if (!cylinder.ok()) return cylinder.status();
  if (*width * (*height + 1) > 64) {
    return absl::InvalidArgumentError(absl::StrCat("a ", *width, "x", *height,
                                                   " board does not fit: width * (height + 1) "
                                                   "must be at most 64"));
  }
  return Connect4(*width, *height, *cylinder);
}

GameOptions Connect4::EffectiveOptions() const {
  return {{"width", std::to_string(width_)},
          {"height", std::to_string(height_)},
          {"cylinder", cylinder_ ? "true" : "false"}};
}

uint64_t Connect4::CellKey(int player, int bit) const {
  return ZobristKey(salt_, static_cast<uint64_t>(player * 64 + bit));
}

uint64_t Connect4::ComputeHash() const {
  uint64_t h = 0;
  for (int p = 0; p < 2; ++p) {
    for (uint64_t b = stones_[p]; b != 0; b &= b - 1) h ^= CellKey(p, std::countr_zero(b));
  }
  return h;
}

uint64_t Connect4::WinningCellsOf(uint64_t b) const {
  // Vertical: only three stones directly below an empty cell.
  uint64_t r = Up(b, 1) & Up(b, 2) & Up(b, 3);
  for (int i = 1; i < 4; ++i) {
    int s = directions_[i];
    // The cell completes _XXX, X_XX, XX_X or XXX_ along this line.
    uint64_t up1 = Up(b, s), up2 = Up(b, 2 * s), dn1 = Down(b, s), dn2 = Down(b, 2 * s);
    r |= up1 & up2 & Up(b, 3 * s);
    r |= dn1 & dn2 & Down(b, 3 * s);
    r |= up1 & up2 & dn1;
    r |= dn1 & dn2 & up1;
  }
  return r & board_;
}

Score Connect4::Evaluate() const {
  const int me = SideToMove();
  const uint64_t mine = stones_[me];
  const uint64_t theirs = stones_[1 - me];
  // A threat the side to move can fill at once is a win one ply beyond the horizon; two the
  // opponent can fill at once are a loss. Scored near (not as) a proven result.
  const uint64_t playable = (mask_ + bottom_) & board_;
  const uint64_t my_threats = WinningCellsOf(mine) & ~mask_;
  const uint64_t their_threats = WinningCellsOf(theirs) & ~mask_;
  if (my_threats & playable) return kImmediateWin;
  if (std::popcount(their_threats & playable) >= 2) return -kImmediateWin;

  const uint64_t free_mine = board_ & ~theirs;
  const uint64_t free_theirs = board_ & ~mine;
  // Windows of four cells that one side can still complete, weighted by how many of its stones
  // are already in them. Counts use bit-sliced adders: one pass per direction, no loops over
  // cells. The weights (1, 2, 12) keep the empty board's best move in the centre at every depth
  // from 1 to 19; heavier two-stone windows let the search drift to columns 2 and 3 at 16-17.
  auto windows = [&](uint64_t stones, uint64_t free) {
    int total = 0;
    for (int s : directions_) {
      uint64_t start = free & Down(free, s) & Down(free, 2 * s) & Down(free, 3 * s);
      uint64_t a = stones, b = Down(stones, s), c = Down(stones, 2 * s), d = Down(stones, 3 * s);
      uint64_t s0a = a ^ b, c0a = a & b, s0b = c ^ d, c0b = c & d;
      uint64_t bit0 = s0a ^ s0b, carry = s0a & s0b;
      uint64_t bit1 = c0a ^ c0b ^ carry;
      uint64_t bit2 = (c0a & c0b) | (carry & (c0a ^ c0b));
      uint64_t one = start & bit0 & ~bit1 & ~bit2;
      uint64_t two = start & ~bit0 & bit1 & ~bit2;
      uint64_t three = start & bit0 & bit1;
      total += std::popcount(one) + 2 * std::popcount(two) + 12 * std::popcount(three);
    }
    return total;
  };
  Score score = windows(mine, free_mine) - windows(theirs, free_theirs);

  // The side that just moved has one stone more in its windows than a position with the same
  // plans where it is still to move: without this, leaves at odd and even depths would see
  // different games and the root score would swing with the depth's parity.
  score += kTempo;

  // Zugzwang decides a quiet ending: the columns fill up in pairs, so the first player ends up
  // with the cells of odd rows (1, 3, 5 from the bottom) and the second with the even ones. The
  // classic rule of thumb: the first player wins with an odd threat that has no threat of the
  // second player below it in its column; failing that, the second player wins with an even
  // threat that has no threat of the first player below it. This does not depend on who is to
  // move, so it weighs the same at odd and even depths.
  const uint64_t first = me == 0 ? my_threats : their_threats;
  const uint64_t second = me == 0 ? their_threats : my_threats;
  bool first_odd = false, second_even = false;
  for (int c = 0; c < width_; ++c) {
    const uint64_t col = ColumnMask(c);
    const uint64_t a = first & col, b = second & col;
    const uint64_t below_b = b != 0 ? (b & -b) - 1 : ~uint64_t{0};
    const uint64_t below_a = a != 0 ? (a & -a) - 1 : ~uint64_t{0};
    first_odd |= (a & odd_rows_ & below_b) != 0;
    second_even |= (b & ~odd_rows_ & below_a) != 0;
  }
  const int zugzwang = first_odd ? kZugzwang : second_even ? -kZugzwang : 0;
  score += me == 0 ? zugzwang : -zugzwang;

  // Other threats still restrict the opponent's moves (the cell below one is poisoned).
  auto threats = [&](uint64_t t, int p) {
    uint64_t good = p == 0 ? odd_rows_ : board_ & ~odd_rows_;
    return 24 * std::popcount(t & good) + 8 * std::popcount(t & ~good);
  };
  score += threats(my_threats, me) - threats(their_threats, 1 - me);

  // Centre columns take part in the most lines.
  for (int c = (width_ - 1) / 2; c <= width_ / 2; ++c) {
    score += 3 * (std::popcount(mine & ColumnMask(c)) - std::popcount(theirs & ColumnMask(c)));
  }
  return score;
}

int Connect4::MoveOrderScore(Move column) const {
  const uint64_t cell = (mask_ + BottomCell(column)) & ColumnMask(column);
  const uint64_t mine = stones_[SideToMove()] | cell;
  int threats = std::popcount(WinningCellsOf(mine) & ~(mask_ | cell));
  int centre = width_ - std::abs(2 * column - (width_ - 1));
  return threats * 1'000'000 + centre * 100'000;
}

GameStatus Connect4::Status() const {
  switch (GetOutcome()) {
    case Outcome::kLoss:
      return {.over = true, .winner = 1 - SideToMove(), .reason = "four in a row"};
    case Outcome::kDraw:
      return {.over = true, .winner = -1, .reason = "the board is full"};
    default:
      return {};
  }
}

absl::StatusOr<Connect4::Move> Connect4::ParseMove(std::string_view text) const {
  text = Trim(text);
  int column = 0;
  if (!ParseInt(text, &column) || column < 1 || column > width_) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", Absl(text), "' is not a column: expected 1..", width_));
  }
  if (mask_ & TopCell(column - 1)) {
    return absl::FailedPreconditionError(absl::StrCat("column ", column, " is full"));
  }
  return static_cast<Move>(column - 1);
}

std::string Connect4::Render() const {
  std::string out;
  for (int r = height_ - 1; r >= 0; --r) {
    for (int c = 0; c < width_; ++c) {
      uint64_t bit = uint64_t{1} << (c * (height_ + 1) + r);
      out += c == 0 ? "" : " ";
      out += (stones_[0] & bit) ? 'X' : (stones_[1] & bit) ? 'O' : '.';
    }
    out += '\n';
  }
  for (int c = 0; c < width_; ++c) {
    out += c == 0 ? "" : " ";
    out += std::to_string((c + 1) % 10);
  }
  out += cylinder_ ? "   (cylinder: columns wrap)\n" : "\n";
  return out;
}

namespace {

// The solvers of one thread (a bot worker never shares its own): the standard 7x6 board's, kept
// once made, and one for the last other size asked for, replaced when another size comes. A
// table keeps what it learned between the moves of a game. One solver per size, never freed,
// let any caller grow a worker by a 64 MiB table for each of the 38 other sizes (RSS rose by
// 61 MB per new size, to 2.4 GiB a worker); now a thread holds at most two.
class SolverCache {
 public:
  connect4::Solver* For(int width, int height) {
    std::unique_ptr<connect4::Solver>& slot = width == 7 && height == 6 ? standard_ : other_;
    if (slot == nullptr || slot->width() != width || slot->height() != height) {
      // The old table is unmapped before the new one is mapped.
      slot.reset();
      slot = std::make_unique<connect4::Solver>(width, height, Connect4::kSolverTableMegabytes);
    }
    return slot.get();
  }
  int held() const { return (standard_ != nullptr) + (other_ != nullptr); }

 private:
  std::unique_ptr<connect4::Solver> standard_;
  std::unique_ptr<connect4::Solver> other_;
};

SolverCache& ThreadSolvers() {
  thread_local SolverCache cache;
  return cache;
}

}  // namespace

int Connect4::SolversOfThisThread() { return ThreadSolvers().held(); }

std::optional<SearchResult<Connect4::Move>> Connect4::Solve(Connect4& game,
                                                            const SearchLimits& limits) {
  if (game.cylinder_ || !connect4::Solver::SupportsSize(game.width_, game.height_)) {
    return std::nullopt;
  }
  const auto start = std::chrono::steady_clock::now();
  const int me = game.SideToMove();
  SearchResult<Move> result;
  int score = 0;
  // The opening is beyond the solver's budget: the book holds those positions' exact values.
  std::optional<connect4::BookEntry> booked;
  if (game.width_ == 7 && game.height_ == 6 &&
      game.ply_ <= connect4::OpeningBook::Standard().max_ply()) {
    booked = connect4::OpeningBook::Standard().Find(game.stones_[me], game.mask_);
  }
  if (booked) {
    result.best_move = static_cast<Move>(booked->column);
    score = booked->score;
    result.elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  } else {
    connect4::Solver* solver = ThreadSolvers().For(game.width_, game.height_);
    // A tenth of the budget is left for the fallback search when the position is too hard to
    // prove: a heuristic move throws results away (147446: it lost at -2 where -1 was there
    // to keep), so the solver gets all the rest. 147446 takes the solver 24.5 M nodes, about 3 s
    // at its 8-10 M nodes/s: beyond the 3 s it had of the level's 5, within the 4.5 s now.
    // The same share of a node budget: the search after a stopped solve gets what the solver
    // left, not the whole budget again (never none: n - n / 10 >= 1 for n >= 1).
    SearchLimits solver_limits{.max_nodes = limits.max_nodes - limits.max_nodes / 10,
                               .time_ms = limits.time_ms * 9 / 10,
                               .stop = limits.stop};
    if (limits.time_ms > 0 && solver_limits.time_ms == 0) solver_limits.time_ms = 1;
    // Win, draw or loss first: a solve the budget stops then often still knows a winning column
    // (6712777: 4.6 s to the exact score, beyond the 4.5 s, where the fallback search turned the
    // win into a draw).
    connect4::SolveResult solved = solver->Solve(game.stones_[me], game.mask_, game.ply_,
                                                 solver_limits, connect4::ProbeOrder::kResultFirst);
    if (!solved.solved && solved.lower > 0 && solved.lower_column >= 0) {
      // A win is proven, not how fast: the outcome only (SearchResult::outcome_only), played.
      result.best_move = static_cast<Move>(solved.lower_column);
      result.has_move = true;
      result.pv = {result.best_move};
      result.score = 1;
      result.exact = true;
      result.outcome_only = true;
      result.depth = game.width_ * game.height_ - game.ply_;
      result.nodes = solved.nodes;
      result.elapsed_ms = solved.elapsed_ms;
      result.stopped = true;
      return result;
    }
    if (!solved.solved || solved.best_column < 0) {
      // No move: the caller's search plays, on what is left of the budget (its nodes and
      // time less the solver's).
      result.nodes = solved.nodes;
      result.elapsed_ms = solved.elapsed_ms;
      result.stopped = !solved.solved;
      return result;
    }
    result.best_move = static_cast<Move>(solved.best_column);
    score = solved.score;
    result.nodes = solved.nodes;
    result.elapsed_ms = solved.elapsed_ms;
  }
  result.has_move = true;
  result.pv = {result.best_move};
  result.exact = true;
  result.depth = game.width_ * game.height_ - game.ply_;
  // Solver score s: the winner's winning stone is placed with m stones on the board, where
  // s = (cells + 1 - m) / 2 rounded down, so m is cells + 1 - 2s or one less, whichever has the
  // winner's parity; the game ends m - ply + 1 plies on.
  const int cells = game.width_ * game.height_;
  if (score != 0) {
    int winner_parity = score > 0 ? game.ply_ & 1 : (game.ply_ + 1) & 1;
    int m = cells + 1 - 2 * std::abs(score);
    if ((m & 1) != winner_parity) --m;
    int plies = m - game.ply_ + 1;
    result.score = score > 0 ? WinIn(plies) : LossIn(plies);
  }
  return result;
}

}  // namespace ply
