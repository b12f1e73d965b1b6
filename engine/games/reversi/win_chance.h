// The score -> win chance curve of reversi for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance reversi --games 500 --a medium --b easy --opening-plies 4
// --time-ms 50 --judge-ms 50 --out engine/games/reversi/win_chance.h`: 22279 heuristic scores from
// 500 self-play games. Rerun it to refit.
//
// fit: log-loss 0.2444 a score (0.6931 saying 50 % everywhere, 0.6931 saying the mean result),
// Brier 0.0791; the scale's 95 % interval 0.03684..0.03963. By the chance the curve gives:
//   0-10 %: given 1.1 %, seen 0.5 % (6937 scores)
//   10-30 %: given 19.6 %, seen 13.0 % (1605 scores)
//   30-50 %: given 39.4 %, seen 39.1 % (1851 scores)
//   50-70 %: given 61.5 %, seen 51.8 % (2672 scores)
//   70-90 %: given 80.0 %, seen 77.7 % (2175 scores)
//   90-100 %: given 98.9 %, seen 99.3 % (7039 scores)
#ifndef PLY_ENGINE_GAMES_REVERSI_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_REVERSI_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kReversiWinChance{
    .scale = 0.0382327, .games = 500, .samples = 22279};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_REVERSI_WIN_CHANCE_H_
