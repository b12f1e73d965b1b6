// The score -> win chance curve of tictactwo for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance tictactwo --games 24 --a medium --b easy --opening-plies 4
// --time-ms 50 --judge-ms 50 --out engine/games/tictactwo/win_chance.h`: 102 heuristic scores from
// 24 self-play games. Rerun it to refit.
#ifndef PLY_ENGINE_GAMES_TICTACTWO_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_TICTACTWO_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kTictactwoWinChance{
    .scale = 0.00724948, .games = 24, .samples = 102};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_TICTACTWO_WIN_CHANCE_H_
