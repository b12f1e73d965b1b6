#include "engine/analysis/fit.h"

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

std::string WinChanceHeader(std::string_view game_view, std::string_view constant_view,
                            const WinChanceCurve& curve, std::string_view command_view) {
  // Abseil's string_view is its own type in this build: work on strings.
  const std::string game(game_view), constant_name(constant_view), command(command_view);
  std::string guard =
      absl::StrCat("PLY_ENGINE_GAMES_", absl::AsciiStrToUpper(game), "_WIN_CHANCE_H_");
  return absl::StrCat(
      "// The score -> win chance curve of ", game,
      " for post-game analysis (engine/analysis/win_chance.h),\n// fitted by `", command, "`:\n// ",
      curve.samples, " heuristic scores from ", curve.games,
      " self-play games. Rerun it to refit.\n#ifndef ", guard, "\n#define ", guard,
      "\n\n#include \"engine/core/win_chance_curve.h\"\n\nnamespace ply {\n\ninline constexpr "
      "WinChanceCurve ",
      constant_name, "{\n    .scale = ", absl::StrFormat("%.6g", curve.scale),
      ", .games = ", curve.games, ", .samples = ", curve.samples,
      "};\n\n}  // namespace ply\n\n#endif  // ", guard, "\n");
}

}  // namespace ply
