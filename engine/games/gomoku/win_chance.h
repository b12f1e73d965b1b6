// The score -> win chance curve of gomoku for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance gomoku --games 500 --a medium --b easy --opening-plies 4
// --time-ms 50 --judge-ms 50 --out engine/games/gomoku/win_chance.h`: 10932 heuristic scores from
// 500 self-play games. Rerun it to refit.
//
// fit: log-loss 0.6342 a score (0.6931 saying 50 % everywhere, 0.6931 saying the mean result),
// Brier 0.2238; the scale's 95 % interval 0.0001589..0.0001834. By the chance the curve gives:
//   0-10 %: given 8.0 %, seen 7.9 % (341 scores)
//   10-30 %: given 11.4 %, seen 11.2 % (429 scores)
//   30-50 %: given 49.1 %, seen 38.9 % (4556 scores)
//   50-70 %: given 51.0 %, seen 60.0 % (4659 scores)
//   70-90 %: given 88.6 %, seen 85.5 % (510 scores)
//   90-100 %: given 91.9 %, seen 89.2 % (437 scores)
#ifndef PLY_ENGINE_GAMES_GOMOKU_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_GOMOKU_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kGomokuWinChance{
    .scale = 0.000171139, .games = 500, .samples = 10932};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_GOMOKU_WIN_CHANCE_H_
