// The analysis commands of `ply-engine`, built on engine/analysis:
//   fit-winchance GAME   plays --a against --b (RunMatch), judges every position of every game as
//                        the analysis does, and fits the game's score -> win chance curve to how
//                        the games ended (analysis/fit.h); prints or writes the header kept in
//                        the game's folder.
//   error-rates GAME     plays each level of --levels against --b and analyses every game the
//                        same way: per level, inaccuracies, mistakes and blunders per 100 of its
//                        own moves and its mean accuracy (docs/performance.md, "Post-game
//                        analysis").
#ifndef PLY_ENGINE_TOOL_ANALYSIS_TOOL_H_
#define PLY_ENGINE_TOOL_ANALYSIS_TOOL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/analysis/analysis.h"
#include "engine/analysis/fit.h"
#include "engine/tool/match.h"

namespace ply {

// Scores and results from the games of `match`, judged with `judge`. Exact judgements (proven
// values) are left out: the curve is for heuristic scores only.
struct WinChanceData {
  std::vector<WinChanceSample> samples;
  int games = 0;
};
absl::StatusOr<WinChanceData> CollectWinChanceSamples(
    const MatchConfig& match, const AnalysisLimits& judge,
    const std::function<void(int game, int games)>& progress = {});

// "kConnect4WinChance" for "connect4", "kTictactoeWinChance" for "tictactoe": the name of the
// constant fit-winchance writes into the game's win_chance.h, which its header names as kWinChance.
std::string WinChanceConstantName(std::string_view game);

struct LevelErrors {
  std::string level;
  int games = 0;
  int moves = 0;
  int inaccuracies = 0;
  int mistakes = 0;
  int blunders = 0;
  double accuracy_sum = 0;  // over moves

  double Per100(int count) const { return moves > 0 ? 100.0 * count / moves : 0; }
  double Accuracy() const { return moves > 0 ? accuracy_sum / moves : 0; }
};

// Each level of `levels` plays `match.games` games against `match.level_b` (match.level_a is
// ignored); only the level's own moves are counted.
absl::StatusOr<std::vector<LevelErrors>> MeasureErrorRates(
    const MatchConfig& match, const std::vector<std::string>& levels, const AnalysisLimits& judge,
    const std::function<void(const std::string& level, int game)>& progress = {});

}  // namespace ply

#endif  // PLY_ENGINE_TOOL_ANALYSIS_TOOL_H_
