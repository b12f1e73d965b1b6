// The score -> win chance curve of morris for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance morris --games 500 --a medium --b easy --opening-plies 4
// --time-ms 50 --judge-ms 50 --out engine/games/morris/win_chance.h`: 16719 heuristic scores from
// 500 self-play games. Rerun it to refit.
//
// fit: log-loss 0.5579 a score (0.6931 saying 50 % everywhere, 0.6931 saying the mean result),
// Brier 0.1918; the scale's 95 % interval 0.001695..0.00183. By the chance the curve gives:
//   0-10 %: given 5.4 %, seen 6.5 % (1123 scores)
//   10-30 %: given 18.9 %, seen 16.0 % (2091 scores)
//   30-50 %: given 41.8 %, seen 43.8 % (4065 scores)
//   50-70 %: given 56.9 %, seen 52.7 % (6016 scores)
//   70-90 %: given 80.7 %, seen 82.3 % (2165 scores)
//   90-100 %: given 94.4 %, seen 93.2 % (1259 scores)
#ifndef PLY_ENGINE_GAMES_MORRIS_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_MORRIS_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kMorrisWinChance{
    .scale = 0.00176223, .games = 500, .samples = 16719};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_MORRIS_WIN_CHANCE_H_
