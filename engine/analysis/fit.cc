#include "engine/analysis/fit.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ply {
namespace {

// d(-log-likelihood)/d(scale): rises with the scale.
double Slope(const std::vector<WinChanceSample>& samples, double scale) {
  double g = 0;
  for (const WinChanceSample& s : samples) {
    double x = static_cast<double>(s.score);
    double p = 1.0 / (1.0 + std::exp(-scale * x));
    g += (p - s.result) * x;
  }
  return g;
}

}  // namespace

absl::StatusOr<WinChanceCurve> FitWinChance(const std::vector<WinChanceSample>& samples,
                                            int games) {
  constexpr double kLow = 1e-7, kHigh = 10.0;
  if (samples.empty()) return absl::FailedPreconditionError("no scores to fit");
  if (Slope(samples, kLow) >= 0) {
    return absl::FailedPreconditionError(
        "higher scores were not won more often: nothing to fit (more games?)");
  }
  if (Slope(samples, kHigh) <= 0) {
    return absl::FailedPreconditionError(
        "every score predicted its result: the scale has no upper bound (more varied games?)");
  }
  double lo = std::log(kLow), hi = std::log(kHigh);
  for (int i = 0; i < 100; ++i) {
    double mid = (lo + hi) / 2;
    (Slope(samples, std::exp(mid)) < 0 ? lo : hi) = mid;
  }
  return WinChanceCurve{.scale = std::exp((lo + hi) / 2),
                        .games = games,
                        .samples = static_cast<int>(samples.size())};
}

WinChanceFit MeasureFit(const std::vector<WinChanceSample>& samples, double scale) {
  WinChanceFit fit;
  fit.bins = {{.from = 0, .to = 0.1},   {.from = 0.1, .to = 0.3}, {.from = 0.3, .to = 0.5},
              {.from = 0.5, .to = 0.7}, {.from = 0.7, .to = 0.9}, {.from = 0.9, .to = 1.0}};
  if (samples.empty()) return fit;
  constexpr double kTiny = 1e-12;
  const auto loss = [&](double p, double y) {
    p = std::clamp(p, kTiny, 1 - kTiny);
    return -(y * std::log(p) + (1 - y) * std::log(1 - p));
  };
  double mean = 0;
  for (const WinChanceSample& s : samples) mean += s.result;
  mean /= static_cast<double>(samples.size());
  double information = 0;
  for (const WinChanceSample& s : samples) {
    const double x = static_cast<double>(s.score);
    const double p = 1.0 / (1.0 + std::exp(-scale * x));
    fit.log_loss += loss(p, s.result);
    fit.log_loss_even += loss(0.5, s.result);
    fit.log_loss_base += loss(mean, s.result);
    fit.brier += (p - s.result) * (p - s.result);
    information += p * (1 - p) * x * x;
    for (WinChanceFit::Bin& b : fit.bins) {
      if (p >= b.from && (p < b.to || b.to >= 1.0)) {
        ++b.count;
        b.predicted += p;
        b.observed += s.result;
        break;
      }
    }
  }
  const double n = static_cast<double>(samples.size());
  fit.log_loss /= n;
  fit.log_loss_even /= n;
  fit.log_loss_base /= n;
  fit.brier /= n;
  const double spread = information > 0 ? 1.96 / std::sqrt(information) : 0;
  fit.scale_low = std::max(0.0, scale - spread);
  fit.scale_high = scale + spread;
  for (WinChanceFit::Bin& b : fit.bins) {
    if (b.count == 0) continue;
    b.predicted /= b.count;
    b.observed /= b.count;
  }
  return fit;
}

std::string FitText(const WinChanceFit& fit, std::string_view prefix_view) {
  const std::string prefix(prefix_view);
  std::string out = absl::StrFormat(
      "%sfit: log-loss %.4f a score (%.4f saying 50 %% everywhere, %.4f saying the mean result),\n"
      "%sBrier %.4f; the scale's 95 %% interval %.4g..%.4g. By the chance the curve gives:\n",
      prefix, fit.log_loss, fit.log_loss_even, fit.log_loss_base, prefix, fit.brier, fit.scale_low,
      fit.scale_high);
  for (const WinChanceFit::Bin& b : fit.bins) {
    if (b.count == 0) continue;
    absl::StrAppendFormat(&out, "%s  %.0f-%.0f %%: given %.1f %%, seen %.1f %% (%d scores)\n",
                          prefix, 100 * b.from, 100 * b.to, 100 * b.predicted, 100 * b.observed,
                          b.count);
  }
  return out;
}

std::string WinChanceHeader(std::string_view game_view, std::string_view constant_view,
                            const WinChanceCurve& curve, std::string_view command_view,
                            const WinChanceFit& fit) {
  // Abseil's string_view is its own type in this build: work on strings.
  const std::string game(game_view), constant_name(constant_view), command(command_view);
  std::string guard =
      absl::StrCat("PLY_ENGINE_GAMES_", absl::AsciiStrToUpper(game), "_WIN_CHANCE_H_");
  return absl::StrCat(
      "// The score -> win chance curve of ", game,
      " for post-game analysis (engine/analysis/win_chance.h),\n// fitted by `", command, "`:\n// ",
      curve.samples, " heuristic scores from ", curve.games,
      " self-play games. Rerun it to refit.\n//\n", FitText(fit, "// "), "#ifndef ", guard,
      "\n#define ", guard,
      "\n\n#include \"engine/core/win_chance_curve.h\"\n\nnamespace ply {\n\ninline constexpr "
      "WinChanceCurve ",
      constant_name, "{\n    .scale = ", absl::StrFormat("%.6g", curve.scale),
      ", .games = ", curve.games, ", .samples = ", curve.samples,
      "};\n\n}  // namespace ply\n\n#endif  // ", guard, "\n");
}

}  // namespace ply
