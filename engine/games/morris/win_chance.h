// The score -> win chance curve of morris for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance morris --games 24 --a medium --b easy --opening-plies 4
// --time-ms 50 --judge-ms 50 --out engine/games/morris/win_chance.h`: 856 heuristic scores from 24
// self-play games. Rerun it to refit.
#ifndef PLY_ENGINE_GAMES_MORRIS_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_MORRIS_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kMorrisWinChance{.scale = 0.00260723, .games = 24, .samples = 856};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_MORRIS_WIN_CHANCE_H_
