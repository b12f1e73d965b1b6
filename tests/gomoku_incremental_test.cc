// Gomoku's incremental state and what reads it without playing: the line keys, shapes, classes
// and ranks kept on every move against a recomputation, and the leaves the search evaluates
// unplayed (EvaluateAfter) against playing them. The rules, search and pbrain programs are in
// gomoku_test.cc.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/random.h"
#include "engine/games/gomoku/gomoku.h"
#include "engine/search/search.h"
#include "tests/gomoku_test_util.h"

namespace ply {
namespace {

using gomoku_test::Make;

TEST(Gomoku, IncrementalPatternStateMatchesARecomputation) {
  // Random games with take-backs, on both rules, an edge-heavy small board and the largest
  // board under both rules; the threat searches inside Evaluate and GenerateSearchMoves place
  // and lift stones too. HashAfter (the search's table prefetch) predicts every Make's hash.
  for (const GameOptions& options : std::vector<GameOptions>{{},
                                                             {{"rule", "exact"}},
                                                             {{"size", "7"}},
                                                             {{"size", "20"}},
                                                             {{"size", "20"}, {"rule", "exact"}}}) {
    Gomoku g = Make(options);
    ASSERT_EQ(g.CheckIncrementalState(), "");
    Rng rng(7);
    std::vector<Gomoku::Move> played;
    for (int step = 0; step < 600; ++step) {
      if (g.GetOutcome() != Outcome::kOngoing || (!played.empty() && rng.Below(4) == 0)) {
        Gomoku::UndoInfo u;
        g.Unmake(played.back(), u);
        played.pop_back();
      } else {
        // Mostly the AI's candidates, so that lines and threats form; sometimes any cell.
        MoveList<Gomoku::Move, Gomoku::kMaxMoves> moves;
        if (rng.Below(3) == 0) {
          g.GenerateMoves(moves);
        } else {
          g.GenerateSearchMoves(moves);
        }
        Gomoku::Move m = moves[static_cast<int>(rng.Below(moves.size()))];
        const uint64_t predicted = g.HashAfter(m);
        Gomoku::UndoInfo u;
        g.Make(m, u);
        ASSERT_EQ(g.Hash(), predicted) << "HashAfter at step " << step;
        played.push_back(m);
        (void)g.Evaluate();
      }
      ASSERT_EQ(g.CheckIncrementalState(), "") << "after step " << step << "\n" << g.Render();
    }
  }
}

TEST(Gomoku, EvaluateAfterMatchesPlayingTheMove) {
  // Every empty cell of random positions, edge-heavy and large boards, both rules: where
  // EvaluateAfter answers, it is Evaluate() once the move is played; where it declines (the
  // leaves that probe for a VCF or end the game), the search plays the move. Both happen often.
  int answered = 0, declined = 0;
  for (int size : {7, 15, 20}) {
    gomoku_test::ForEachRandomPosition(size, 31, 4, 1, [&](Gomoku& g) {
      MoveList<Gomoku::Move, Gomoku::kMaxMoves> moves;
      g.GenerateMoves(moves);
      for (Gomoku::Move m : moves) {
        Score eval = 0;
        if (!g.EvaluateAfter(m, eval)) {
          ++declined;
          continue;
        }
        ++answered;
        Gomoku played = g;
        Gomoku::UndoInfo u;
        played.Make(m, u);
        ASSERT_EQ(played.GetOutcome(), Outcome::kOngoing) << g.MoveToText(m) << "\n" << g.Render();
        ASSERT_EQ(eval, played.Evaluate()) << g.MoveToText(m) << "\n" << g.Render();
      }
    });
  }
  EXPECT_GT(answered, 30000);
  EXPECT_GT(declined, 10000);
}

// Gomoku less EvaluateAfter: the search plays every leaf.
struct GomokuPlayingLeaves : Gomoku {
  explicit GomokuPlayingLeaves(const Gomoku& g) : Gomoku(g) {}
  static absl::StatusOr<GomokuPlayingLeaves> Create(const GameOptions& options) {
    absl::StatusOr<Gomoku> g = Gomoku::Create(options);
    if (!g.ok()) return g.status();
    return GomokuPlayingLeaves(*g);
  }
  bool EvaluateAfter(Move, Score&) const = delete;
};

TEST(Gomoku, SearchIsTheSameWhetherLeavesArePlayedOrNot) {
  // The same nodes, score, move and line: the leaves evaluated unplayed are scored, counted and
  // checked for a stop exactly as played ones, noise included.
  for (const auto& opening : std::vector<std::vector<std::string>>{
           {"h8"}, {"h6", "g9", "e9", "f8", "e7", "f10"}, {"h8", "i9", "h9", "h10", "g9"}}) {
    for (int noise : {0, 30}) {
      Gomoku g = gomoku_test::FromMoves(opening);
      GomokuPlayingLeaves played(g);
      const SearchLimits limits{.max_depth = 6, .eval_noise = noise, .seed = 5};
      auto a = std::make_unique<Searcher<Gomoku>>(8)->Search(g, limits);
      auto b = std::make_unique<Searcher<GomokuPlayingLeaves>>(8)->Search(played, limits);
      EXPECT_EQ(a.nodes, b.nodes);
      EXPECT_EQ(a.score, b.score);
      EXPECT_EQ(a.best_move, b.best_move);
      EXPECT_EQ(a.pv, b.pv);
      // A node budget stops both at the same node.
      const SearchLimits cut{.max_nodes = a.nodes / 2, .eval_noise = noise, .seed = 5};
      auto c = std::make_unique<Searcher<Gomoku>>(8)->Search(g, cut);
      auto d = std::make_unique<Searcher<GomokuPlayingLeaves>>(8)->Search(played, cut);
      EXPECT_EQ(c.nodes, d.nodes);
      EXPECT_EQ(c.best_move, d.best_move);
    }
  }
}

}  // namespace
}  // namespace ply
