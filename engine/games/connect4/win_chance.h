// The score -> win chance curve of connect4 for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance connect4 --games 500 --a medium --b easy --opening-plies
// 4 --time-ms 50 --judge-ms 50 --out engine/games/connect4/win_chance.h`: 3556 heuristic scores
// from 500 self-play games. Rerun it to refit.
//
// fit: log-loss 0.6063 a score (0.6931 saying 50 % everywhere, 0.6929 saying the mean result),
// Brier 0.2105; the scale's 95 % interval 0.0248..0.03016. By the chance the curve gives:
//   0-10 %: given 6.6 %, seen 3.7 % (108 scores)
//   10-30 %: given 19.7 %, seen 18.7 % (262 scores)
//   30-50 %: given 42.1 %, seen 36.2 % (1031 scores)
//   50-70 %: given 57.5 %, seen 53.6 % (1590 scores)
//   70-90 %: given 80.4 %, seen 77.1 % (399 scores)
//   90-100 %: given 93.4 %, seen 90.7 % (166 scores)
#ifndef PLY_ENGINE_GAMES_CONNECT4_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_CONNECT4_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kConnect4WinChance{
    .scale = 0.0274802, .games = 500, .samples = 3556};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_CONNECT4_WIN_CHANCE_H_
