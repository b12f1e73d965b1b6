// Plays moves given in a game's notation on a game of any kind, failing the test (with the board)
// at the first move that does not parse or comes after the end: the one "play these moves" helper
// of the per-game tests.
#ifndef PLY_TESTS_PLAY_MOVES_H_
#define PLY_TESTS_PLAY_MOVES_H_

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "engine/core/types.h"

namespace ply::testing_util {

template <typename G, typename Range>
void PlayMoves(G& g, const Range& moves) {
  for (const auto& item : moves) {
    const std::string text(item);
    ASSERT_EQ(g.GetOutcome(), Outcome::kOngoing) << "before " << text << "\n" << g.Render();
    auto m = g.ParseMove(text);
    ASSERT_TRUE(m.ok()) << text << ": " << m.status() << "\n" << g.Render();
    typename G::UndoInfo undo;
    g.Make(*m, undo);
  }
}

// For a braced list: PlayMoves(g, {"c3", "b2"}).
template <typename G>
void PlayMoves(G& g, std::initializer_list<std::string_view> moves) {
  PlayMoves<G, std::initializer_list<std::string_view>>(g, moves);
}

}  // namespace ply::testing_util

#endif  // PLY_TESTS_PLAY_MOVES_H_
