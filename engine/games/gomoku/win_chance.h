// The score -> win chance curve of gomoku for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance gomoku --games 24 --a medium --b easy --opening-plies 4
// --time-ms 50 --judge-ms 50 --out engine/games/gomoku/win_chance.h`: 679 heuristic scores from 24
// self-play games. Rerun it to refit.
#ifndef PLY_ENGINE_GAMES_GOMOKU_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_GOMOKU_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kGomokuWinChance{.scale = 0.000147809, .games = 24, .samples = 679};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_GOMOKU_WIN_CHANCE_H_
