// The strong levels of Connect Four never throw away a result they can prove: the move they
// choose keeps the position's exact value, checked against the exact solver.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "engine/core/random.h"
#include "engine/games/connect4/solver.h"
#include "engine/registry/registry.h"
#include "tests/data/test_data.h"

namespace ply {
namespace {

// A position of a set in tests/data/connect4/ with its exact value (test_data.h).
using Line = test_data::Connect4Position;

std::vector<std::string> Digits(const std::string& moves) {
  std::vector<std::string> out;
  for (char c : moves) out.emplace_back(1, c);
  return out;
}

// The value for the side to move after `move` keeps the value `score` had before it.
void ExpectValueKept(connect4::Solver& solver, const Line& line, const std::string& move) {
  auto after = solver.SolveSequence(line.moves + move);
  if (!after.ok()) {
    // The move won on the spot: the best possible result when the position was won.
    EXPECT_GT(line.score, 0) << line.moves << " +" << move;
    EXPECT_EQ(line.score, connect4::WinScore(7, 6, static_cast<int>(line.moves.size())))
        << line.moves << " +" << move;
    return;
  }
  ASSERT_TRUE(after->solved);
  EXPECT_EQ(-after->score, line.score) << line.moves << " then " << move;
}

// Plays `level` in every `every`-th position of a test set (`limit` of them; a missing or short
// set fails) and checks that the chosen move is proven and keeps the position's exact value.
void ExpectLevelKeepsValues(const std::string& set, int every, int limit,
                            const std::string& level) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(test_data::LoadConnect4Set(set, every, limit, lines));
  ASSERT_EQ(static_cast<int>(lines.size()), limit) << "positions sampled from " << set << ".txt";
  const GameInfo* info = FindGame("connect4");
  SearchCache cache(8);
  connect4::Solver solver(7, 6, 16);
  for (const Line& line : lines) {
    auto game = ReplayGame("connect4", {}, Digits(line.moves));
    ASSERT_TRUE(game.ok()) << game.status();
    auto report = (*game)->ChooseMove({.level = *FindLevel(info->levels, level)}, &cache);
    ASSERT_TRUE(report.ok());
    ASSERT_TRUE(report->exact) << line.moves << ": the position is within " << level << "'s reach";
    ExpectValueKept(solver, line, report->move);
  }
}

TEST(Connect4Levels, PerfectKeepsTheExactValueOfMiddleGamePositions) {
  ExpectLevelKeepsValues("middle-easy", /*every=*/50, /*limit=*/20, "perfect");
}

TEST(Connect4Levels, HardKeepsEveryResultItProvesInTheEndGame) {
  ExpectLevelKeepsValues("end-easy", /*every=*/25, /*limit=*/40, "hard");
}

// Positions the perfect level never reaches on its own lines (its book covers those): random
// openings of 8 to 12 plies, two a ply, where a person may have taken over a game or set up a
// position. From each the level must choose a move that keeps the exact value a fresh solve
// gives. Its budget here is nodes, not the clock (40 M: what its 5 s give the solver on an idle
// machine), so that a loaded machine cannot change the result. Shallower openings off its lines
// can take the solver more than that (one of 6 plies took 37.5 M); to 5 plies the book holds
// every position (connect4_book_test) and past it a stopped solve still plays a win it proved
// (PerfectOutOfBudgetPlaysTheWinItProved): docs/performance.md, "Connect Four perfect off its
// own lines".
TEST(Connect4Levels, PerfectKeepsTheValueOfRandomOpeningsOffItsOwnLines) {
  const GameInfo* info = FindGame("connect4");
  Difficulty perfect = *FindLevel(info->levels, "perfect");
  perfect.time_ms = 0;
  connect4::Solver solver(7, 6, 16);
  Rng rng(39);
  int checked = 0;
  for (int plies = 8; plies <= 12; ++plies) {
    for (int sample = 0; sample < 2; ++sample) {
      // A random legal opening that has not ended (and does not hand the mover a win at once:
      // those are trivial).
      std::string moves;
      int score = 0;
      while (true) {
        moves.clear();
        auto game = CreateGame("connect4");
        ASSERT_TRUE(game.ok());
        while (static_cast<int>(moves.size()) < plies && !(*game)->Status().over) {
          const std::vector<std::string> legal = (*game)->LegalMoves();
          const std::string& m = legal[rng.Below(legal.size())];
          ASSERT_TRUE((*game)->Play(m).ok());
          moves += m;
        }
        if ((*game)->Status().over) continue;
        solver.Reset();
        auto fresh = solver.SolveSequence(moves);
        ASSERT_TRUE(fresh.ok() && fresh->solved) << moves;
        score = fresh->score;
        if (score != connect4::WinScore(7, 6, plies)) break;
      }
      const Line line{.moves = moves, .score = score};
      auto game = ReplayGame("connect4", {}, Digits(moves));
      ASSERT_TRUE(game.ok()) << game.status();
      auto report = (*game)->ChooseMove({.level = perfect, .max_nodes = 40'000'000});
      ASSERT_TRUE(report.ok()) << report.status();
      ASSERT_TRUE(report->exact) << moves << ": not proved within 40 M nodes";
      solver.Reset();
      ExpectValueKept(solver, line, report->move);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 10);
}

// When its budget runs out before the exact score, the perfect level plays the winning column
// its solve proved on the way (the solver asks "a win?" first: ProbeOrder::kResultFirst) rather
// than a heuristic move, which could turn the win into a draw (6712777 did, on the clock), and
// says so: "win (proven)", the outcome without its distance.
TEST(Connect4Levels, PerfectOutOfBudgetPlaysTheWinItProved) {
  std::vector<Line> lines;
  ASSERT_NO_FATAL_FAILURE(test_data::LoadConnect4Set("middle-medium", 5, 100, lines));
  const GameInfo* info = FindGame("connect4");
  Difficulty perfect = *FindLevel(info->levels, "perfect");
  perfect.time_ms = 0;
  connect4::Solver solver(7, 6, 16);
  int proved_wins = 0;
  for (const Line& line : lines) {
    if (line.score <= 0) continue;
    bool proved = false;
    for (int64_t budget : {256, 1024, 4096, 16384}) {
      auto game = ReplayGame("connect4", {}, Digits(line.moves));
      ASSERT_TRUE(game.ok()) << game.status();
      auto report = (*game)->ChooseMove({.level = perfect, .max_nodes = budget});
      ASSERT_TRUE(report.ok()) << report.status();
      // The level keeps its solver's table from move to move: a win a smaller budget proved is
      // in it, and a larger budget must not lose it.
      if (proved) {
        EXPECT_TRUE(report->exact) << line.moves << " lost its proof at " << budget;
      }
      proved |= report->exact;
      if (!report->outcome_only) continue;
      ++proved_wins;
      EXPECT_TRUE(report->exact);
      EXPECT_EQ(report->ScoreText(), "win (proven)") << line.moves;
      ASSERT_TRUE((*game)->Play(report->move).ok()) << line.moves << " then " << report->move;
      if ((*game)->Status().over) {
        EXPECT_EQ((*game)->Status().winner, (*game)->SideToMove() ^ 1) << line.moves;
        continue;
      }
      solver.Reset();
      auto after = solver.SolveSequence(line.moves + report->move);
      ASSERT_TRUE(after.ok() && after->solved) << line.moves << " then " << report->move;
      EXPECT_LT(after->score, 0) << line.moves << " then " << report->move << " at " << budget;
    }
  }
  EXPECT_GE(proved_wins, 10);
}

// A node budget bounds the perfect level's whole move. When the solver cannot finish, the search
// after it plays on what the solver left: before, it got the whole budget again, and the report
// left the solver's nodes out.
TEST(Connect4Levels, PerfectKeepsToItsNodeBudget) {
  const GameInfo* info = FindGame("connect4");
  Difficulty perfect = *FindLevel(info->levels, "perfect");
  Difficulty hard = *FindLevel(info->levels, "hard");
  perfect.time_ms = hard.time_ms = 0;
  // Seven plies, past every position the book holds whatever the moves (six): the solver's.
  const std::string moves = "1717264";
  constexpr int64_t kBudget = 200'000;
  auto play = [&](const Difficulty& level, int64_t nodes) {
    auto game = ReplayGame("connect4", {}, Digits(moves));
    EXPECT_TRUE(game.ok()) << game.status();
    absl::StatusOr<SearchReport> report = (*game)->ChooseMove({.level = level, .max_nodes = nodes});
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : SearchReport{};
  };
  const SearchReport r = play(perfect, kBudget);
  ASSERT_FALSE(r.exact) << "solved within the budget: the test needs a harder position";
  EXPECT_TRUE(r.stopped);
  EXPECT_LE(r.nodes, kBudget + kBudget / 20);
  EXPECT_GE(r.nodes, kBudget * 9 / 10) << "the solver's nodes belong in the report";
  // The search had the tenth the solver left: no deeper than `hard` reaches on that (the same
  // search, fresh tables, a deterministic node budget).
  const SearchReport tenth = play(hard, kBudget / 10);
  const SearchReport whole = play(hard, kBudget);
  ASSERT_LT(tenth.depth, whole.depth);
  EXPECT_LE(r.depth, tenth.depth);
}

// The solver cannot prove the empty board within a move's budget (that takes minutes); the
// perfect level finds it in its opening book, at once and exactly: the centre, a win.
TEST(Connect4Levels, PerfectOpensInTheCentreFromItsBook) {
  const GameInfo* info = FindGame("connect4");
  auto game = CreateGame("connect4");
  ASSERT_TRUE(game.ok());
  auto report =
      (*game)->ChooseMove({.level = *FindLevel(info->levels, "perfect"), .max_nodes = 1000000});
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->exact);
  EXPECT_EQ(report->move, "4");
  EXPECT_GT(report->score, 0);
  EXPECT_EQ(report->nodes, 0) << "looked up, not searched";
}

// The perfect level reports how far the end is, as the search does: a win with the next stone
// is a win in one ply, and the empty board is won with the first player's 21st stone.
TEST(Connect4Levels, PerfectReportsTheDistanceToTheEnd) {
  const GameInfo* info = FindGame("connect4");
  const Difficulty perfect = *FindLevel(info->levels, "perfect");
  struct Case {
    const char* moves;
    Score score;
  };
  for (const Case& c : {Case{"445566", WinIn(1)}, Case{"44556", LossIn(2)}, Case{"", WinIn(41)}}) {
    auto game = ReplayGame("connect4", {}, Digits(c.moves));
    ASSERT_TRUE(game.ok());
    auto report = (*game)->ChooseMove({.level = perfect});
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->exact) << c.moves;
    EXPECT_EQ(report->score, c.score) << "after '" << c.moves << "'";
  }
}

// Column 4 is the only first move that wins. Every iteration of one search, up to the depth a
// two-second budget reaches on a fast machine, must see that (before the evaluation weighed odd
// and even depths alike, depth 16 chose column 3). Depths stand in for budgets here so that the
// result is the same on any machine.
TEST(Connect4Levels, HardOpensInTheCentreAtEveryDepthUpToSixteen) {
  const GameInfo* info = FindGame("connect4");
  auto game = CreateGame("connect4");
  ASSERT_TRUE(game.ok());
  Difficulty hard = *FindLevel(info->levels, "hard");
  hard.time_ms = 0;
  std::vector<std::string> moves;
  auto report = (*game)->ChooseMove(
      {.level = hard, .max_depth = 16, .on_iteration = [&](const SearchReport& r) {
         moves.push_back(r.move);
         EXPECT_EQ(r.move, "4") << "depth " << r.depth;
       }});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(moves.size(), 16u);
  EXPECT_EQ(report->move, "4");
}

// The root score must not swing with the parity of the depth: a leaf where the side that just
// moved has the extra stone is weighed like one where it is still to move.
TEST(Connect4Levels, HardScoresOddAndEvenDepthsAlike) {
  for (const char* line : {"", "4", "44", "4453"}) {
    auto game = ReplayGame("connect4", {}, Digits(line));
    ASSERT_TRUE(game.ok());
    std::vector<int> scores;
    auto report = (*game)->ChooseMove(
        {.level = {.name = "fixed", .time_ms = 0},
         .max_depth = 14,
         .on_iteration = [&](const SearchReport& r) { scores.push_back(r.score); }});
    ASSERT_TRUE(report.ok());
    // Mean change from one depth to the next from depth 8 on; it was about 45 (+20 at odd
    // depths, -20 at even ones) before.
    ASSERT_EQ(scores.size(), 14u);
    int change = 0;
    for (size_t d = 8; d < scores.size(); ++d) change += std::abs(scores[d] - scores[d - 1]);
    EXPECT_LE(change / static_cast<int>(scores.size() - 8), 15) << "after '" << line << "'";
  }
}

// The same on the clock, bounded: the budgets the levels and services use, 100 ms to 2 s.
TEST(Connect4Levels, HardOpensInTheCentreWithinRealTimeBudgets) {
  const GameInfo* info = FindGame("connect4");
  for (int64_t ms : {100, 500, 2000}) {
    auto game = CreateGame("connect4");
    ASSERT_TRUE(game.ok());
    auto report = (*game)->ChooseMove({.level = *FindLevel(info->levels, "hard"), .time_ms = ms});
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report->move, "4") << ms << " ms, depth " << report->depth;
  }
}

}  // namespace
}  // namespace ply
