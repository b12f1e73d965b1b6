// Fitting a game's score -> win chance curve (win_chance.h) to self-play results. Each sample is
// a heuristic score from the mover's side and how the game then ended for that mover (1 win, 1/2
// draw, 0 loss). The scale is the maximum-likelihood one for W(s) = 1 / (1 + exp(-scale * s)),
// a draw counting as half a win and half a loss: the log-likelihood is concave in the scale, so
// its derivative, sum of (W(s) - result) * s, rises with it and the root is found by bisection.
#ifndef PLY_ENGINE_ANALYSIS_FIT_H_
#define PLY_ENGINE_ANALYSIS_FIT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/analysis/win_chance.h"
#include "engine/core/types.h"

namespace ply {

struct WinChanceSample {
  Score score = 0;
  double result = 0.5;
};

// FAILED_PRECONDITION when the samples cannot fix a scale (none, all scores zero, or higher
// scores not more often won).
absl::StatusOr<WinChanceCurve> FitWinChance(const std::vector<WinChanceSample>& samples, int games);

// The header kept in the game's folder (engine/games/GAME/win_chance.h), saying how it was made.
std::string WinChanceHeader(std::string_view game, std::string_view constant_name,
                            const WinChanceCurve& curve, std::string_view command);

}  // namespace ply

#endif  // PLY_ENGINE_ANALYSIS_FIT_H_
