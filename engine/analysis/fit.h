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

// How well a curve fits the samples it was fitted to. `log_loss` is the mean negative
// log-likelihood (natural log) of the results under the curve, against `log_loss_even` for a
// curve that says 50 % everywhere (ln 2) and `log_loss_base` for the samples' mean result
// everywhere; `brier` the mean squared error of the chance. The scale's 95 % interval comes from
// the likelihood's curvature (scale +- 1.96 / sqrt(sum W (1 - W) s^2)). `bins`: the samples by
// the chance the curve gives them (0-10 %, 10-30 %, 30-50 %, 50-70 %, 70-90 %, 90-100 %), each
// with the mean chance given and the mean result seen.
struct WinChanceFit {
  double log_loss = 0;
  double log_loss_even = 0;
  double log_loss_base = 0;
  double brier = 0;
  double scale_low = 0;
  double scale_high = 0;
  struct Bin {
    double from = 0, to = 0;
    int count = 0;
    double predicted = 0;
    double observed = 0;
  };
  std::vector<Bin> bins;
};
WinChanceFit MeasureFit(const std::vector<WinChanceSample>& samples, double scale);
// The fit in a few lines of text ("log-loss 0.52 (0.69 at 50 % ...").
std::string FitText(const WinChanceFit& fit, std::string_view line_prefix = "");

// The header kept in the game's folder (engine/games/GAME/win_chance.h), saying how it was made
// and how well it fits.
std::string WinChanceHeader(std::string_view game, std::string_view constant_name,
                            const WinChanceCurve& curve, std::string_view command,
                            const WinChanceFit& fit);

}  // namespace ply

#endif  // PLY_ENGINE_ANALYSIS_FIT_H_
