// Perft: the number of positions reached after exactly `depth` plies, the standard check that
// move generation and make/undo are right. Whether a finished game counts as a leaf at later
// depths is the game's convention (G::kPerftCountsFinishedGames).
#ifndef PLY_ENGINE_SEARCH_PERFT_H_
#define PLY_ENGINE_SEARCH_PERFT_H_

#include <cstdint>

#include "engine/core/types.h"
#include "engine/search/game_concept.h"

namespace ply {

template <Game G>
uint64_t Perft(G& game, int depth) {
  if (game.GetOutcome() != Outcome::kOngoing) {
    return depth == 0 || G::kPerftCountsFinishedGames ? 1 : 0;
  }
  if (depth == 0) return 1;
  MoveListOf<G> moves;
  game.GenerateMoves(moves);
  if (depth == 1 && !G::kPerftCountsFinishedGames) return static_cast<uint64_t>(moves.size());
  uint64_t total = 0;
  typename G::UndoInfo undo;
  for (auto m : moves) {
    game.Make(m, undo);
    total += Perft(game, depth - 1);
    game.Unmake(m, undo);
  }
  return total;
}

}  // namespace ply

#endif  // PLY_ENGINE_SEARCH_PERFT_H_
