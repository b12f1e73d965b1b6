// Basic vocabulary shared by every game and the search: players, outcomes and the score scale.
//
// Scores are from the side to move's point of view (negamax). A proven win is kMateScore minus the
// number of plies to it, so a search prefers the quickest win and the slowest loss; heuristic
// evaluations always stay inside +-kMaxEval, far below any proven score.
#ifndef PLY_ENGINE_CORE_TYPES_H_
#define PLY_ENGINE_CORE_TYPES_H_

#include <cstdint>

namespace ply {

using Score = int32_t;

inline constexpr Score kMateScore = 30000;
inline constexpr int kMaxSearchPly = 128;
// A score at or beyond this is a proven win (or, negated, a proven loss).
inline constexpr Score kMateThreshold = kMateScore - 1000;
inline constexpr Score kMaxEval = 20000;
inline constexpr Score kInfinity = 32000;

inline constexpr bool IsMateScore(Score s) { return s >= kMateThreshold || s <= -kMateThreshold; }
inline constexpr Score WinIn(int ply) { return kMateScore - ply; }
inline constexpr Score LossIn(int ply) { return -kMateScore + ply; }
// Plies to the end for a mate score (positive for wins, negative for losses).
inline constexpr int MatePlies(Score s) { return s > 0 ? kMateScore - s : -(kMateScore + s); }

// Who is to move: 0 moves first, 1 second.
using Player = int;

// The state of a game from the point of view of the side to move.
enum class Outcome : uint8_t { kOngoing, kWin, kLoss, kDraw };

// The state of a game from the players' point of view, for services and tools.
struct GameStatus {
  bool over = false;
  // -1 for a draw or an unfinished game, else the winning player.
  int winner = -1;
  // Why the game ended, in words: "four in a row", "no legal move", "move limit".
  const char* reason = "";
  // For a game decided by a count (Reversi's discs), each player's count at the end; -1 for
  // games that have none.
  int points[2] = {-1, -1};
  // With points: the final margin as the game's exact solver counts it, from the first
  // player's side (Reversi: the disc difference with the empty cells to the winner).
  int margin = 0;
};

}  // namespace ply

#endif  // PLY_ENGINE_CORE_TYPES_H_
