// The score -> win chance curve of draughts for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance draughts --games 500 --a medium --b easy --opening-plies
// 4 --time-ms 50 --judge-ms 50 --out engine/games/draughts/win_chance.h`: 22144 heuristic scores
// from 500 self-play games. Rerun it to refit.
//
// fit: log-loss 0.3230 a score (0.6931 saying 50 % everywhere, 0.6931 saying the mean result),
// Brier 0.1079; the scale's 95 % interval 0.01687..0.01809. By the chance the curve gives:
//   0-10 %: given 2.4 %, seen 1.7 % (6292 scores)
//   10-30 %: given 15.1 %, seen 25.2 % (869 scores)
//   30-50 %: given 45.9 %, seen 28.9 % (3277 scores)
//   50-70 %: given 53.9 %, seen 63.2 % (4360 scores)
//   70-90 %: given 84.5 %, seen 73.7 % (892 scores)
//   90-100 %: given 97.5 %, seen 97.5 % (6454 scores)
#ifndef PLY_ENGINE_GAMES_DRAUGHTS_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_DRAUGHTS_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kDraughtsWinChance{
    .scale = 0.0174807, .games = 500, .samples = 22144};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_DRAUGHTS_WIN_CHANCE_H_
