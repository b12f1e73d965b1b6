#include "engine/analysis/win_chance.h"

#include <cmath>

#include "engine/registry/registry.h"

namespace ply {

WinChanceCurve WinChanceCurveFor(std::string_view game) {
  const GameInfo* info = FindGame(game);
  if (info == nullptr || info->win_chance.scale <= 0) return {.scale = 1.0 / 400};
  return info->win_chance;
}

int ExactOutcome(Score score) { return score > 0 ? 1 : score < 0 ? -1 : 0; }

double WinChance(const WinChanceCurve& curve, Score score, bool exact) {
  if (exact || IsMateScore(score)) return (ExactOutcome(score) + 1) / 2.0;
  return 1.0 / (1.0 + std::exp(-curve.scale * static_cast<double>(score)));
}

}  // namespace ply
