// The score -> win chance curve of reversi for post-game analysis (engine/analysis/win_chance.h),
// fitted by `ply-engine fit-winchance reversi --games 24 --a medium --b easy --opening-plies 4
// --time-ms 50 --judge-ms 50 --out engine/games/reversi/win_chance.h`: 1109 heuristic scores from
// 24 self-play games. Rerun it to refit.
#ifndef PLY_ENGINE_GAMES_REVERSI_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_REVERSI_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kReversiWinChance{.scale = 0.0466437, .games = 24, .samples = 1109};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_REVERSI_WIN_CHANCE_H_
