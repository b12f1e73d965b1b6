// The conformance checks every game must pass, written once over the Game concept. Each game's
// test calls RunConformance<G>() for its variants: random playouts in which every position is
// checked for make/undo restoring the exact state and hash, the incremental hash matching a
// fresh computation, notation round trips for every legal move, and a sane evaluation.
#ifndef PLY_TESTS_CONFORMANCE_H_
#define PLY_TESTS_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/random.h"
#include "engine/search/game_concept.h"

namespace ply::testing {

template <Game G>
void CheckPosition(G& game) {
  ASSERT_EQ(game.Hash(), game.ComputeHash()) << game.Render();
  if (game.GetOutcome() != Outcome::kOngoing) {
    EXPECT_TRUE(game.Status().over);
    return;
  }
  EXPECT_FALSE(game.Status().over);
  Score eval = game.Evaluate();
  EXPECT_LE(eval, kMaxEval);
  EXPECT_GE(eval, -kMaxEval);
  MoveListOf<G> moves;
  game.GenerateMoves(moves);
  ASSERT_FALSE(moves.empty()) << "an unfinished game must have a move\n" << game.Render();
  for (auto m : moves) {
    std::string text = game.MoveToText(m);
    auto parsed = game.ParseMove(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status() << "\n" << game.Render();
    EXPECT_TRUE(*parsed == m) << "notation round trip failed for " << text;
    const G before = game;
    typename G::UndoInfo undo;
    game.Make(m, undo);
    EXPECT_EQ(game.Hash(), game.ComputeHash()) << "after " << text;
    game.Unmake(m, undo);
    ASSERT_TRUE(game == before) << "make/undo of " << text << " changed the state\n"
                                << before.Render() << "->\n"
                                << game.Render();
    ASSERT_EQ(game.Hash(), before.Hash());
  }
}

// Plays `playouts` random games from `start`, checking every position on the way, then unwinds
// each game move by move back to the start.
template <Game G>
void RunConformance(const G& start, int playouts, uint64_t seed = 1) {
  Rng rng(seed);
  for (int n = 0; n < playouts; ++n) {
    G game = start;
    std::vector<std::pair<typename G::Move, typename G::UndoInfo>> line;
    std::vector<G> states;
    while (true) {
      CheckPosition(game);
      if (::testing::Test::HasFatalFailure()) return;
      if (game.GetOutcome() != Outcome::kOngoing) break;
      ASSERT_LT(line.size(), 100000u) << "a game must end";
      MoveListOf<G> moves;
      game.GenerateMoves(moves);
      auto m = moves[static_cast<int>(rng.Below(moves.size()))];
      states.push_back(game);
      line.emplace_back(m, typename G::UndoInfo{});
      game.Make(m, line.back().second);
    }
    while (!line.empty()) {
      game.Unmake(line.back().first, line.back().second);
      line.pop_back();
      ASSERT_TRUE(game == states.back()) << "unwinding a whole game did not restore the state";
      states.pop_back();
    }
    ASSERT_TRUE(game == start);
  }
}

}  // namespace ply::testing

#endif  // PLY_TESTS_CONFORMANCE_H_
