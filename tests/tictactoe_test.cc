#include "engine/games/tictactoe/tictactoe.h"

#include <gtest/gtest.h>

#include "engine/search/perft.h"
#include "engine/search/search.h"
#include "tests/conformance.h"
#include "tests/play_moves.h"

namespace ply {
namespace {

TicTacToe Play(std::initializer_list<std::string_view> moves) {
  TicTacToe g = *TicTacToe::Create({});
  testing_util::PlayMoves(g, moves);
  return g;
}

TEST(TicTacToe, PerftMatchesKnownCounts) {
  const uint64_t expected[] = {9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872};
  TicTacToe g = *TicTacToe::Create({});
  for (int d = 1; d <= 9; ++d) EXPECT_EQ(Perft(g, d), expected[d - 1]) << "depth " << d;
}

TEST(TicTacToe, PassesConformance) { testing::RunConformance(*TicTacToe::Create({}), 300); }

TEST(TicTacToe, SearchProvesTheEmptyBoardIsADraw) {
  TicTacToe g = *TicTacToe::Create({});
  Searcher<TicTacToe> s(1);
  auto r = s.Search(g, {});
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.score, 0);
}

TEST(TicTacToe, TakesAnImmediateWinAndBlocks) {
  // X: a1 b1, O: a2 b2; X to move wins at c1.
  TicTacToe g = Play({"a1", "a2", "b1", "b2"});
  Searcher<TicTacToe> s(1);
  auto r = s.Search(g, {});
  EXPECT_EQ(g.MoveToText(r.best_move), "c1");
  EXPECT_EQ(r.score, WinIn(1));
  // X: a1 b1, O: b2, O to move must block at c1.
  TicTacToe h = Play({"a1", "b2", "b1"});
  auto r2 = s.Search(h, {});
  EXPECT_EQ(h.MoveToText(r2.best_move), "c1");
}

TEST(TicTacToe, ParseRejectsBadCellsAndTakenCells) {
  TicTacToe g = Play({"b2"});
  EXPECT_EQ(g.ParseMove("d1").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.ParseMove("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.ParseMove("b2").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ParseMove("5").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(*g.ParseMove("1"), *g.ParseMove("a1"));
}

TEST(TicTacToe, DetectsWinsAndDraws) {
  TicTacToe win = Play({"a1", "a2", "b2", "b3", "c3"});
  EXPECT_EQ(win.GetOutcome(), Outcome::kLoss);
  EXPECT_EQ(win.Status().winner, 0);
  TicTacToe draw = Play({"a1", "b1", "c1", "b2", "a2", "c2", "b3", "a3", "c3"});
  EXPECT_EQ(draw.GetOutcome(), Outcome::kDraw);
  EXPECT_EQ(draw.Status().winner, -1);
}

}  // namespace
}  // namespace ply
