// TicTacToe's score -> win chance curve for post-game analysis (engine/analysis/win_chance.h).
// Written by `ply-engine fit-winchance tictactoe --out engine/games/tictactoe/win_chance.h`; not
// fitted yet.
#ifndef PLY_ENGINE_GAMES_TICTACTOE_WIN_CHANCE_H_
#define PLY_ENGINE_GAMES_TICTACTOE_WIN_CHANCE_H_

#include "engine/core/win_chance_curve.h"

namespace ply {

inline constexpr WinChanceCurve kTictactoeWinChance{.scale = 0.0025, .games = 0, .samples = 0};

}  // namespace ply

#endif  // PLY_ENGINE_GAMES_TICTACTOE_WIN_CHANCE_H_
