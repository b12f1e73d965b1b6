// The score -> win chance curve that post-game analysis judges moves by. A heuristic score s
// (evaluation units, from the mover's side) maps to
//   W(s) = 1 / (1 + exp(-scale * s))
// the chance that the mover goes on to win, a draw counting as half a win. Proven values map to
// 1 (win), 1/2 (draw) and 0 (loss). Each game keeps its own `scale` in its folder
// (engine/games/<game>/win_chance.h), fitted from self-play results by
// `ply-engine fit-winchance GAME` (fit.h says how), since each game's evaluation has its own units.
#ifndef PLY_ENGINE_ANALYSIS_WIN_CHANCE_H_
#define PLY_ENGINE_ANALYSIS_WIN_CHANCE_H_

#include <string_view>

#include "engine/core/types.h"
#include "engine/core/win_chance_curve.h"

namespace ply {

// The curve the game declares (its kWinChance, from its folder's win_chance.h); a game without a
// fitted one, or no such game, gets a flat guess (scale 1/400).
WinChanceCurve WinChanceCurveFor(std::string_view game);

// The mover's chance in [0, 1]. `exact`: the score is the game's true value (a proven win or loss,
// or for a solver that counts discs, its sign).
double WinChance(const WinChanceCurve& curve, Score score, bool exact);

// -1 loss, 0 draw, +1 win for a proven value.
int ExactOutcome(Score score);

}  // namespace ply

#endif  // PLY_ENGINE_ANALYSIS_WIN_CHANCE_H_
