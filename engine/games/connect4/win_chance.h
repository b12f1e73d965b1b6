// The score -> win chance curve of connect4 for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance connect4 --games 24 --a medium --b easy --opening-plies 4
// --time-ms 50 --judge-ms 50 --out engine/games/connect4/win_chance.h`: 171 heuristic scores from
// 24 self-play games. Rerun it to refit.
#ifndef PLY_ENGINE_GAMES_CONNECT4_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_CONNECT4_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kConnect4WinChance{.scale = 0.0576146, .games = 24, .samples = 171};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_CONNECT4_WIN_CHANCE_H_
