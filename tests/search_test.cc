// The search's contracts, checked on real games: budgets, the stop flag, discarded iterations,
// determinism, and what it reports.
#include "engine/search/search.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <new>
#include <thread>

#include "engine/games/connect4/connect4.h"
#include "engine/games/tictactoe/tictactoe.h"

namespace ply {
namespace {

Connect4 Opening() {
  Connect4 g = *Connect4::Create({});
  for (Connect4::Move m : {3, 3, 2}) {
    Connect4::UndoInfo u;
    g.Make(m, u);
  }
  return g;
}

// A size near 2^64 (a negative flag cast to size_t) made the sizing loop overflow to 0 buckets
// and spin forever. Now every size is capped to 1..kMaxTableMegabytes; whether the machine can
// give 64 GiB of address space is its own matter (bad_alloc), but the call returns.
TEST(TranspositionTable, HugeAndZeroSizesAreCapped) {
  TranspositionTable<uint8_t> zero(0);
  EXPECT_EQ(zero.SizeBytes(), size_t{1} << 20);
  for (size_t huge : {static_cast<size_t>(-1), static_cast<size_t>(-1) >> 20, size_t{1} << 50}) {
    try {
      TranspositionTable<uint8_t> table(huge);
      EXPECT_EQ(table.SizeBytes(), kMaxTableMegabytes << 20);
    } catch (const std::bad_alloc&) {
    }
  }
}

TEST(Search, NeverExceedsItsNodeBudget) {
  auto s = std::make_unique<Searcher<Connect4>>(4);
  Connect4 g = Opening();
  for (int64_t budget : {1, 10, 1000, 54321}) {
    auto r = s->Search(g, {.max_nodes = budget});
    EXPECT_LE(r.nodes, budget);
    EXPECT_TRUE(r.has_move);
    EXPECT_TRUE(r.stopped);
  }
}

TEST(Search, StopsNearItsTimeBudget) {
  auto s = std::make_unique<Searcher<Connect4>>(4);
  Connect4 g = Opening();
  auto start = std::chrono::steady_clock::now();
  auto r = s->Search(g, {.time_ms = 100});
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  // Generous: this checks the budget is honoured, not how fast the machine is.
  EXPECT_LT(ms, 100 + 150);
  EXPECT_GE(r.depth, 1);
  EXPECT_TRUE(r.has_move);
}

TEST(Search, StopsPromptlyWhenTheFlagIsRaised) {
  auto s = std::make_unique<Searcher<Connect4>>(4);
  Connect4 g = Opening();
  std::atomic<bool> stop{false};
  std::chrono::steady_clock::time_point raised;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    raised = std::chrono::steady_clock::now();
    stop = true;
  });
  auto r = s->Search(g, {.stop = &stop});
  auto returned = std::chrono::steady_clock::now();
  stopper.join();
  EXPECT_TRUE(r.stopped);
  EXPECT_TRUE(r.has_move);
  double latency_ms = std::chrono::duration<double, std::milli>(returned - raised).count();
  EXPECT_LT(latency_ms, 50);
}

TEST(Search, AStopBeforeDepthOneStillGivesALegalMove) {
  auto s = std::make_unique<Searcher<Connect4>>(1);
  Connect4 g = Opening();
  std::atomic<bool> stop{true};
  auto r = s->Search(g, {.stop = &stop});
  EXPECT_TRUE(r.has_move);
  EXPECT_EQ(r.depth, 0);
  EXPECT_TRUE(g.ParseMove(g.MoveToText(r.best_move)).ok());
  // ... and it is the game's first choice: the move with the best order score (here the third
  // disc on column 7, which makes a threat), not merely the first one generated.
  Connect4 threat = *Connect4::Create({});
  for (Connect4::Move m : {0, 6, 1, 6, 2}) {
    Connect4::UndoInfo u;
    threat.Make(m, u);
  }
  auto first_choice = s->Search(threat, {.stop = &stop});
  EXPECT_EQ(first_choice.best_move, 6);
}

TEST(Search, LeavesTheGameAsItWas) {
  auto s = std::make_unique<Searcher<Connect4>>(1);
  Connect4 g = Opening();
  const Connect4 before = g;
  s->Search(g, {.max_depth = 9});
  EXPECT_TRUE(g == before);
}

TEST(Search, ReportsDepthNodesAndAPrincipalVariation) {
  auto s = std::make_unique<Searcher<Connect4>>(4);
  Connect4 g = Opening();
  int iterations = 0;
  auto r = s->Search(g, {.max_depth = 7}, [&](const auto& it) {
    ++iterations;
    EXPECT_EQ(it.depth, iterations);
  });
  EXPECT_EQ(r.depth, 7);
  EXPECT_EQ(iterations, 7);
  EXPECT_GT(r.nodes, 7);
  EXPECT_FALSE(r.exact);
  ASSERT_FALSE(r.pv.empty());
  EXPECT_EQ(r.pv[0], r.best_move);
  // The PV is a legal line.
  Connect4 copy = g;
  for (auto m : r.pv) {
    if (copy.GetOutcome() != Outcome::kOngoing) break;
    MoveListOf<Connect4> moves;
    copy.GenerateMoves(moves);
    ASSERT_TRUE(moves.contains(m));
    Connect4::UndoInfo u;
    copy.Make(m, u);
  }
}

TEST(Search, IsDeterministicForASeed) {
  Connect4 g = Opening();
  SearchLimits limits{.max_depth = 6, .eval_noise = 50, .seed = 7};
  auto a = std::make_unique<Searcher<Connect4>>(1)->Search(g, limits);
  auto b = std::make_unique<Searcher<Connect4>>(1)->Search(g, limits);
  EXPECT_EQ(a.best_move, b.best_move);
  EXPECT_EQ(a.score, b.score);
  EXPECT_EQ(a.nodes, b.nodes);
}

TEST(Search, RandomMoveChanceOfOneAlwaysPlaysAtRandom) {
  Connect4 g = Opening();
  auto s = std::make_unique<Searcher<Connect4>>(1);
  int distinct = 0;
  bool seen[7] = {};
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto r = s->Search(g, {.random_move_chance = 1.0, .seed = seed});
    EXPECT_TRUE(r.random_move);
    if (!seen[r.best_move]) ++distinct;
    seen[r.best_move] = true;
  }
  EXPECT_GE(distinct, 5);
}

TEST(Search, PrefersTheQuickestWin) {
  // X has a win now (column 3 or 7 on the bottom row) and other slower wins.
  Connect4 g = *Connect4::Create({});
  for (Connect4::Move m : {3, 3, 4, 4, 5, 5}) {
    Connect4::UndoInfo u;
    g.Make(m, u);
  }
  auto r = std::make_unique<Searcher<Connect4>>(1)->Search(g, {.max_depth = 9});
  EXPECT_EQ(r.score, WinIn(1));
  EXPECT_TRUE(r.exact);
}

TEST(Search, ProvesTicTacToeWithoutADepthCap) {
  TicTacToe g = *TicTacToe::Create({});
  auto r = std::make_unique<Searcher<TicTacToe>>(1)->Search(g, {});
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.score, 0);
  EXPECT_LE(r.depth, 9);
}

}  // namespace
}  // namespace ply
