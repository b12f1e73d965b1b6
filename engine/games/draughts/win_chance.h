// The score -> win chance curve of draughts for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance draughts --games 24 --a medium --b easy --opening-plies 4
// --time-ms 50 --judge-ms 50 --out engine/games/draughts/win_chance.h`: 1182 heuristic scores from
// 24 self-play games. Rerun it to refit.
#ifndef PLY_ENGINE_GAMES_DRAUGHTS_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_DRAUGHTS_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kDraughtsWinChance{
    .scale = 0.0203818, .games = 24, .samples = 1182};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_DRAUGHTS_WIN_CHANCE_H_
