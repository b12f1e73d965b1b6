#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/games/connect4/connect4.h"
#include "engine/games/connect4/solver.h"
#include "gtest/gtest.h"
#include "tests/data/test_data.h"

namespace ply::connect4 {
namespace {

// The sets of tests/data/connect4/ (test_data.h): positions of the kinds of the public
// benchmark sets, valued by this solver when they were written; a missing set fails the test.
using Line = test_data::Connect4Position;

// Every `stride`-th position of a set, at most `limit` of them (0: all); there must be
// `expected` of them. Call through ASSERT_NO_FATAL_FAILURE.
void LoadSet(const std::string& name, int stride, int limit, size_t expected,
             std::vector<Line>& lines) {
  ASSERT_NO_FATAL_FAILURE(test_data::LoadConnect4Set(name, stride, limit, lines));
  ASSERT_EQ(lines.size(), expected) << "positions sampled from " << name << ".txt";
}

// A position on a W x H board in the solver's layout, built by playing columns.
struct Board {
  int width;
  int height;
  uint64_t current = 0;
  uint64_t mask = 0;
  int moves = 0;

  int cells() const { return width * height; }
  uint64_t ColumnMask(int c) const { return ((uint64_t{1} << height) - 1) << (c * (height + 1)); }
  bool CanPlay(int c) const {
    return (mask & (uint64_t{1} << (c * (height + 1) + height - 1))) == 0;
  }
  uint64_t Cell(int c) const { return (mask + (uint64_t{1} << c * (height + 1))) & ColumnMask(c); }
  bool HasFour(uint64_t p) const {
    for (int s : {1, height, height + 1, height + 2}) {
      const uint64_t pairs = p & (p >> s);
      if (pairs & (pairs >> 2 * s)) return true;
    }
    return false;
  }
  bool IsWinningMove(int c) const { return HasFour(current | Cell(c)); }
  void Play(int c) {
    const uint64_t cell = Cell(c);
    current ^= mask;
    mask |= cell;
    ++moves;
  }
};

// Plain negamax over the whole game tree, memoised on the position: slow but obviously right.
class BruteForce {
 public:
  int Score(const Board& b) {
    if (b.moves == b.cells()) return 0;
    const uint64_t key = b.current + b.mask;
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    int best = -1000;
    for (int c = 0; c < b.width; ++c) {
      if (!b.CanPlay(c)) continue;
      if (b.IsWinningMove(c)) {
        best = (b.cells() + 1 - b.moves) / 2;
        break;
      }
      Board child = b;
      child.Play(c);
      best = std::max(best, -Score(child));
    }
    memo_[key] = best;
    return best;
  }

 private:
  std::unordered_map<uint64_t, int> memo_;
};

// Random positions with `min_moves`..`max_moves` stones where nobody has won yet.
std::vector<Board> RandomPositions(int width, int height, int count, int min_moves, int max_moves,
                                   uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Board> out;
  while (static_cast<int>(out.size()) < count) {
    Board b{width, height};
    const int target = std::uniform_int_distribution<int>(min_moves, max_moves)(rng);
    while (b.moves < target) {
      std::vector<int> safe;
      for (int c = 0; c < width; ++c) {
        if (b.CanPlay(c) && !b.IsWinningMove(c)) safe.push_back(c);
      }
      if (safe.empty()) break;
      b.Play(safe[std::uniform_int_distribution<size_t>(0, safe.size() - 1)(rng)]);
    }
    if (b.moves == target) out.push_back(b);
  }
  return out;
}

// best_column must be legal and reach the reported score.
void ExpectBestColumnAchievesScore(Solver& solver, const Board& b, const SolveResult& r) {
  ASSERT_TRUE(r.solved);
  if (b.moves == b.cells()) {
    EXPECT_EQ(r.best_column, -1);
    return;
  }
  ASSERT_GE(r.best_column, 0);
  ASSERT_LT(r.best_column, b.width);
  ASSERT_TRUE(b.CanPlay(r.best_column));
  if (b.IsWinningMove(r.best_column)) {
    EXPECT_EQ(r.score, WinScore(b.width, b.height, b.moves));
    return;
  }
  Board child = b;
  child.Play(r.best_column);
  const SolveResult c = solver.Solve(child.current, child.mask, child.moves);
  ASSERT_TRUE(c.solved);
  EXPECT_EQ(-c.score, r.score);
}

Board FromDigits(const std::string& digits) {
  Board b{7, 6};
  for (char ch : digits) b.Play(ch - '1');
  return b;
}

// A column a stopped solve named must be legal and reach at least `bound` (by a fresh solve).
void ExpectColumnReaches(Solver& judge, const Board& b, int column, int bound,
                         const std::string& moves) {
  ASSERT_TRUE(b.CanPlay(column));
  if (b.IsWinningMove(column)) return;
  Board child = b;
  child.Play(column);
  judge.Reset();
  const SolveResult c = judge.Solve(child.current, child.mask, child.moves);
  ASSERT_TRUE(c.solved);
  EXPECT_GE(-c.score, bound) << moves << " column " << column;
}

void ExpectSetSolved(const std::vector<Line>& lines, bool check_best_column) {
  Solver solver;
  for (const Line& line : lines) {
    solver.Reset();
    const absl::StatusOr<SolveResult> r = solver.SolveSequence(line.moves);
    ASSERT_TRUE(r.ok()) << line.moves << ": " << r.status();
    ASSERT_TRUE(r->solved) << line.moves;
    EXPECT_EQ(r->score, line.score) << line.moves;
    if (check_best_column) ExpectBestColumnAchievesScore(solver, FromDigits(line.moves), *r);
  }
}

TEST(Connect4SolverTest, SolvesEveryEndgamePosition) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("end-easy", /*stride=*/1, /*limit=*/0, 1000, lines));
  ExpectSetSolved(lines, /*check_best_column=*/true);
}

TEST(Connect4SolverTest, SolvesEveryEasyMiddlegamePosition) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("middle-easy", /*stride=*/1, /*limit=*/0, 1000, lines));
  ExpectSetSolved(lines, /*check_best_column=*/true);
}

TEST(Connect4SolverTest, SolvesMediumMiddlegameSample) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("middle-medium", /*stride=*/10, /*limit=*/0, 50, lines));
  ExpectSetSolved(lines, /*check_best_column=*/true);
}

TEST(Connect4SolverTest, SolvesEasyOpeningSample) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("begin-easy", /*stride=*/10, /*limit=*/0, 50, lines));
  ExpectSetSolved(lines, /*check_best_column=*/true);
}

TEST(Connect4SolverTest, SolvesMediumOpeningSample) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("begin-medium", /*stride=*/20, /*limit=*/10, 10, lines));
  ExpectSetSolved(lines, /*check_best_column=*/false);
}

TEST(Connect4SolverTest, KeepsTableBetweenPositionsOfOneGame) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("middle-medium", /*stride=*/25, /*limit=*/0, 20, lines));
  // Without Reset the table carries over; scores must not change.
  Solver solver;
  for (const Line& line : lines) {
    const absl::StatusOr<SolveResult> r = solver.SolveSequence(line.moves);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->score, line.score) << line.moves;
  }
}

TEST(Connect4SolverTest, ImmediateWinScoresByStonesPlaced) {
  Solver solver;
  // First player has three stacked in column 1 and wins with its 4th stone: 22 - 4.
  absl::StatusOr<SolveResult> r = solver.SolveSequence("121212");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->solved);
  EXPECT_EQ(r->score, WinScore(7, 6, 6));
  EXPECT_EQ(r->score, 18);
  EXPECT_EQ(r->best_column, 0);
}

TEST(Connect4SolverTest, ForcedLossScoresByOpponentStones) {
  Solver solver;
  // The first player holds columns 3-5 of the bottom row with both ends open: whatever the
  // second player does, the first wins with its 4th stone.
  absl::StatusOr<SolveResult> r = solver.SolveSequence("31415");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->score, -WinScore(7, 6, 6));
  EXPECT_TRUE(r->best_column == 1 || r->best_column == 5);
}

TEST(Connect4SolverTest, RejectsBadSequences) {
  Solver solver;
  EXPECT_FALSE(solver.SolveSequence("8").ok());
  EXPECT_FALSE(solver.SolveSequence("0").ok());
  EXPECT_FALSE(solver.SolveSequence("4x").ok());
  EXPECT_FALSE(solver.SolveSequence("1111111").ok());  // column 1 holds six stones
  EXPECT_FALSE(solver.SolveSequence("1212121").ok());  // the last move wins
  EXPECT_TRUE(solver.SolveSequence("121212").ok());
}

TEST(Connect4SolverTest, SupportsOnlyFlatBoardsThatFitSixtyFourBits) {
  EXPECT_TRUE(Solver::SupportsSize(7, 6));
  EXPECT_TRUE(Solver::SupportsSize(4, 4));
  EXPECT_TRUE(Solver::SupportsSize(8, 7));
  EXPECT_TRUE(Solver::SupportsSize(12, 4));
  EXPECT_FALSE(Solver::SupportsSize(3, 6));
  EXPECT_FALSE(Solver::SupportsSize(7, 3));
  EXPECT_FALSE(Solver::SupportsSize(9, 7));
  EXPECT_FALSE(Solver::SupportsSize(13, 4));
}

TEST(Connect4SolverTest, NodeBudgetStopsTheSearch) {
  Solver solver;
  const SolveResult r = solver.Solve(0, 0, 0, {.max_nodes = 5000});
  EXPECT_FALSE(r.solved);
  EXPECT_GE(r.nodes, 5000);
  EXPECT_LE(r.nodes, 5002);
}

TEST(Connect4SolverTest, RaisedStopFlagStopsTheSearch) {
  Solver solver;
  std::atomic<bool> stop{true};
  SolveResult r = solver.Solve(0, 0, 0, {.stop = &stop});
  EXPECT_FALSE(r.solved);

  // Raised from another thread while the empty board (far too big to finish) is searched.
  stop = false;
  std::thread raiser([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop = true;
  });
  const auto start = std::chrono::steady_clock::now();
  r = solver.Solve(0, 0, 0, {.stop = &stop});
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  raiser.join();
  EXPECT_FALSE(r.solved);
  EXPECT_LT(ms, 2000);
}

TEST(Connect4SolverTest, TimeLimitStopsTheSearch) {
  Solver solver;
  const SolveResult r = solver.Solve(0, 0, 0, {.time_ms = 30});
  EXPECT_FALSE(r.solved);
  EXPECT_GE(r.elapsed_ms, 30);
  EXPECT_LT(r.elapsed_ms, 2000);
}

TEST(Connect4SolverTest, StoppedSearchLeavesTableSound) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("middle-medium", /*stride=*/50, /*limit=*/0, 10, lines));
  // Aborted searches must not have stored anything wrong: solve the same positions again
  // without clearing the table.
  Solver solver;
  for (const Line& line : lines) {
    const absl::StatusOr<SolveResult> cut = solver.SolveSequence(line.moves, {.max_nodes = 300});
    ASSERT_TRUE(cut.ok());
    const absl::StatusOr<SolveResult> r = solver.SolveSequence(line.moves);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->solved);
    EXPECT_EQ(r->score, line.score) << line.moves;
  }
}

// A warm table holds bounds for the root itself (a stopped solve of the same position, an earlier
// move's search), so some probes are settled without searching and name no column: the best
// column must still reach the exact score, not only the bound of the probe that last named one.
TEST(Connect4SolverTest, BestColumnReachesTheScoreFromAWarmTable) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("middle-medium", /*stride=*/4, /*limit=*/0, 125, lines));
  Solver solver, judge;
  for (ProbeOrder order : {ProbeOrder::kFastest, ProbeOrder::kResultFirst}) {
    for (const Line& line : lines) {
      const Board b = FromDigits(line.moves);
      solver.Reset();
      for (int64_t budget : {1000, 30000}) {
        solver.Solve(b.current, b.mask, b.moves, {.max_nodes = budget}, order);
      }
      const SolveResult r = solver.Solve(b.current, b.mask, b.moves, {}, order);
      ASSERT_TRUE(r.solved) << line.moves;
      EXPECT_EQ(r.score, line.score) << line.moves;
      judge.Reset();
      ExpectBestColumnAchievesScore(judge, b, r);
    }
  }
}

// With kResultFirst an unstopped solve still ends on the exact score and a column reaching it
// (its bounds then both the score).
TEST(Connect4SolverTest, ResultFirstProbesFindTheExactScoresAndBestColumns) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("middle-medium", /*stride=*/10, /*limit=*/0, 50, lines));
  Solver solver;
  for (const Line& line : lines) {
    solver.Reset();
    const Board b = FromDigits(line.moves);
    const SolveResult r = solver.Solve(b.current, b.mask, b.moves, {}, ProbeOrder::kResultFirst);
    ASSERT_TRUE(r.solved) << line.moves;
    EXPECT_EQ(r.score, line.score) << line.moves;
    EXPECT_EQ(r.lower, r.score);
    EXPECT_EQ(r.upper, r.score);
    ExpectBestColumnAchievesScore(solver, b, r);
  }
}

// What a solve stopped on its node budget reports: bounds that hold the true score and a column
// proved to reach the lower one. With kResultFirst a won position stopped midway most often
// still names a winning column (what the perfect level plays when its time runs out).
TEST(Connect4SolverTest, AStoppedSolveKeepsWhatItProved) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("middle-medium", /*stride=*/5, /*limit=*/0, 100, lines));
  Solver solver, judge;
  int wins_kept[2] = {0, 0};
  for (const Line& line : lines) {
    const Board b = FromDigits(line.moves);
    for (ProbeOrder order : {ProbeOrder::kFastest, ProbeOrder::kResultFirst}) {
      for (int64_t budget = 64;; budget *= 4) {
        solver.Reset();
        const SolveResult r =
            solver.Solve(b.current, b.mask, b.moves, {.max_nodes = budget}, order);
        if (r.solved) break;
        ASSERT_LE(r.lower, line.score) << line.moves << " at " << budget;
        ASSERT_GE(r.upper, line.score) << line.moves << " at " << budget;
        if (r.lower_column < 0) continue;
        ASSERT_NO_FATAL_FAILURE(ExpectColumnReaches(judge, b, r.lower_column, r.lower, line.moves));
        if (r.lower > 0) ++wins_kept[order == ProbeOrder::kResultFirst];
      }
    }
  }
  // Stopped solves that named a winning column: kFastest's first probes aim at quick wins and
  // prove few; kResultFirst asks "a win?" first.
  EXPECT_GT(wins_kept[1], wins_kept[0]);
  EXPECT_GE(wins_kept[1], 10);
}

// The same with the table kept between the stopped solves of a position, as in play (the
// perfect level never clears it): the root's own entry then holds the win a smaller budget
// proved, and a probe it settles must still name a winning column. Once a budget has named one,
// every larger budget that stops names one too.
TEST(Connect4SolverTest, AWarmTableKeepsTheWinningColumnItProved) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(LoadSet("middle-medium", /*stride=*/5, /*limit=*/0, 100, lines));
  Solver solver, judge;
  int stopped_after_a_win = 0;
  for (const Line& line : lines) {
    if (line.score <= 0) continue;
    const Board b = FromDigits(line.moves);
    solver.Reset();
    bool named = false;
    for (int64_t budget = 64;; budget *= 2) {
      const SolveResult r =
          solver.Solve(b.current, b.mask, b.moves, {.max_nodes = budget}, ProbeOrder::kResultFirst);
      if (r.solved) break;
      ASSERT_LE(r.lower, line.score) << line.moves << " at " << budget;
      ASSERT_GE(r.upper, line.score) << line.moves << " at " << budget;
      if (named) {
        ++stopped_after_a_win;
        ASSERT_GE(r.lower_column, 0) << line.moves << " lost its winning column at " << budget;
        ASSERT_GT(r.lower, 0) << line.moves << " at " << budget;
      }
      if (r.lower_column < 0 || r.lower <= 0) continue;
      named = true;
      ASSERT_NO_FATAL_FAILURE(ExpectColumnReaches(judge, b, r.lower_column, r.lower, line.moves));
    }
  }
  // Wins proved by one budget and not finished by the next: the case this test is about.
  EXPECT_GE(stopped_after_a_win, 10);
}

TEST(Connect4SolverTest, FullBoardIsADraw) {
  // Columns filled in pairs leave rows alternating between the players: no four anywhere.
  Board b{4, 4};
  for (int c : {0, 1, 0, 1, 1, 0, 1, 0, 2, 3, 2, 3, 3, 2, 3, 2}) {
    ASSERT_FALSE(b.IsWinningMove(c));
    b.Play(c);
  }
  Solver solver(4, 4, 1);
  const SolveResult r = solver.Solve(b.current, b.mask, b.moves);
  EXPECT_TRUE(r.solved);
  EXPECT_EQ(r.score, 0);
  EXPECT_EQ(r.best_column, -1);
}

TEST(Connect4SolverTest, SmallBoardWithLargeTableSolves) {
  // A table with more buckets than the board has keys.
  Solver solver(4, 4, 64);
  const SolveResult r = solver.Solve(0, 0, 0);
  EXPECT_TRUE(r.solved);
  EXPECT_EQ(r.score, BruteForce().Score(Board{4, 4}));
}

TEST(Connect4SolverTest, SmallBoardFromEmptyMatchesBruteForce) {
  // Brute force visits every position of the game: 4x5 has about 1.3 million.
  for (auto [w, h] : {std::pair{4, 4}, std::pair{4, 5}}) {
    Solver solver(w, h, 4);
    BruteForce brute;
    const Board empty{w, h};
    const SolveResult r = solver.Solve(0, 0, 0);
    ASSERT_TRUE(r.solved);
    EXPECT_EQ(r.score, brute.Score(empty)) << w << "x" << h;
    ExpectBestColumnAchievesScore(solver, empty, r);
  }
}

void ExpectRandomPositionsMatchBruteForce(int w, int h, int min_moves, int max_moves) {
  Solver solver(w, h, 4);
  BruteForce brute;
  for (const Board& b : RandomPositions(w, h, 40, min_moves, max_moves, /*seed=*/w * 100 + h)) {
    solver.Reset();
    const SolveResult r = solver.Solve(b.current, b.mask, b.moves);
    ASSERT_TRUE(r.solved);
    EXPECT_EQ(r.score, brute.Score(b)) << w << "x" << h << " moves " << b.moves;
    ExpectBestColumnAchievesScore(solver, b, r);
  }
}

TEST(Connect4SolverTest, RandomPositionsMatchBruteForce) {
  ExpectRandomPositionsMatchBruteForce(5, 4, 6, 14);
  ExpectRandomPositionsMatchBruteForce(6, 5, 14, 24);
  ExpectRandomPositionsMatchBruteForce(7, 6, 28, 36);
  // Boards whose keys need more than 49 bits use the wide table entries.
  ExpectRandomPositionsMatchBruteForce(8, 6, 34, 42);
  ExpectRandomPositionsMatchBruteForce(12, 4, 36, 42);
}

// Connect4::Solve keeps a solver for the next calls of its thread: the 7x6 board's and the last
// other size's, never one per size asked for (each maps a 64 MiB table; one per size let a caller
// grow a worker by 2.4 GiB over the 38 other sizes). Every supported size in turn, in a thread of
// its own, then answers still proven on small boards.
TEST(Connect4SolverTest, ConnectFourKeepsAtMostTwoSolversPerThread) {
  const int live_before = Solver::Live();
  int most_held = 0;
  int sizes = 0;
  std::thread worker([&] {
    auto solve = [&](int w, int h, const std::string& columns, int64_t max_nodes = 2000) {
      absl::StatusOr<Connect4> game =
          Connect4::Create({{"width", std::to_string(w)}, {"height", std::to_string(h)}});
      EXPECT_TRUE(game.ok()) << game.status();
      if (!game.ok()) return std::optional<SearchResult<Connect4::Move>>();
      for (char c : columns) {
        Connect4::UndoInfo undo;
        game->Make(static_cast<Connect4::Move>(c - '1'), undo);
      }
      std::optional<SearchResult<Connect4::Move>> r =
          Connect4::Solve(*game, SearchLimits{.max_nodes = max_nodes});
      most_held = std::max(most_held, Connect4::SolversOfThisThread());
      EXPECT_LE(Solver::Live() - live_before, 2) << w << "x" << h;
      return r;
    };
    // Past the opening book, so that the 7x6 solver is made.
    solve(7, 6, "444444333333");
    for (int w = 4; w <= Connect4::kMaxWidth; ++w) {
      for (int h = 4; h <= 12; ++h) {
        if (!Solver::SupportsSize(w, h)) continue;
        ++sizes;
        solve(w, h, "1");
      }
    }
    EXPECT_EQ(Connect4::SolversOfThisThread(), 2);
    // Answers are still proven, and right: 4x4 from the empty board against brute force, and
    // a 4x5 position with a win in one for the side to move.
    std::optional<SearchResult<Connect4::Move>> empty = solve(4, 4, "", /*max_nodes=*/0);
    ASSERT_TRUE(empty.has_value() && empty->has_move);
    EXPECT_TRUE(empty->exact);
    const int brute = BruteForce().Score(Board{4, 4});
    EXPECT_EQ(empty->score > 0, brute > 0);
    EXPECT_EQ(empty->score < 0, brute < 0);
    std::optional<SearchResult<Connect4::Move>> win = solve(4, 5, "121212", /*max_nodes=*/0);
    ASSERT_TRUE(win.has_value() && win->has_move);
    EXPECT_EQ(win->best_move, 0);
    EXPECT_EQ(win->score, WinIn(1));
  });
  worker.join();
  EXPECT_EQ(sizes, 39);
  EXPECT_EQ(most_held, 2);
  // The thread's solvers went with it.
  EXPECT_EQ(Solver::Live(), live_before);
}

}  // namespace
}  // namespace ply::connect4
