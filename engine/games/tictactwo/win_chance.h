// The score -> win chance curve of tictactwo for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance tictactwo --games 500 --a medium --b easy --opening-plies
// 4 --time-ms 50 --judge-ms 50 --out engine/games/tictactwo/win_chance.h`: 3428 heuristic scores
// from 500 self-play games. Rerun it to refit.
//
// fit: log-loss 0.6847 a score (0.6931 saying 50 % everywhere, 0.6917 saying the mean result),
// Brier 0.1837; the scale's 95 % interval 0.004039..0.007077. By the chance the curve gives:
//   10-30 %: given 26.8 %, seen 0.0 % (7 scores)
//   30-50 %: given 41.6 %, seen 31.5 % (119 scores)
//   50-70 %: given 51.1 %, seen 47.0 % (3168 scores)
//   70-90 %: given 74.8 %, seen 71.3 % (134 scores)
#ifndef PLY_ENGINE_GAMES_TICTACTWO_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_TICTACTWO_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kTictactwoWinChance{
    .scale = 0.00555794, .games = 500, .samples = 3428};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_TICTACTWO_WIN_CHANCE_H_
