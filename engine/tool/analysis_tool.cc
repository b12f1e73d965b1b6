#include "engine/tool/analysis_tool.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/registry/registry.h"

namespace ply {

absl::StatusOr<WinChanceData> CollectWinChanceSamples(
    const MatchConfig& match, const AnalysisLimits& judge,
    const std::function<void(int game, int games)>& progress) {
  absl::StatusOr<MatchResult> played = RunMatch(match);
  if (!played.ok()) return played.status();
  WinChanceData data;
  SearchCache cache;
  for (const GameRecord& record : played->records) {
    absl::StatusOr<std::unique_ptr<AnyGame>> g = CreateGame(match.game, match.options);
    if (!g.ok()) return g.status();
    // Result for the first player: 1 win, 1/2 draw, 0 loss.
    const double first = record.result_for_a == 0                              ? 0.5
                         : (record.result_for_a > 0) == (record.a_player == 0) ? 1.0
                                                                               : 0.0;
    for (const std::string& move : record.moves) {
      if ((*g)->Status().over) break;
      absl::StatusOr<SearchReport> r = JudgePosition(**g, judge, &cache);
      if (!r.ok()) return r.status();
      if (!r->exact && !IsMateScore(r->score)) {
        data.samples.push_back(
            {.score = r->score, .result = (*g)->SideToMove() == 0 ? first : 1.0 - first});
      }
      if (absl::Status s = (*g)->Play(move); !s.ok()) return s;
    }
    ++data.games;
    if (progress) progress(data.games, played->games());
  }
  return data;
}

std::string WinChanceConstantName(std::string_view game) {
  std::string name(game);
  if (!name.empty()) name[0] = absl::ascii_toupper(static_cast<unsigned char>(name[0]));
  return absl::StrCat("k", name, "WinChance");
}

absl::StatusOr<std::vector<LevelErrors>> MeasureErrorRates(
    const MatchConfig& match, const std::vector<std::string>& levels, const AnalysisLimits& judge,
    const std::function<void(const std::string& level, int game)>& progress) {
  std::vector<LevelErrors> out;
  SearchCache cache;
  for (const std::string& level : levels) {
    MatchConfig config = match;
    config.level_a = level;
    absl::StatusOr<MatchResult> played = RunMatch(config);
    if (!played.ok()) return played.status();
    LevelErrors errors{.level = level};
    for (const GameRecord& record : played->records) {
      absl::StatusOr<GameAnalysis> a =
          AnalyzeGame(match.game, match.options, record.moves, judge, &cache);
      if (!a.ok()) return a.status();
      ++errors.games;
      for (const MoveVerdict& v : a->moves) {
        if (v.player != record.a_player) continue;
        ++errors.moves;
        errors.accuracy_sum += v.accuracy;
        if (v.mark == Mark::kInaccuracy) ++errors.inaccuracies;
        if (v.mark == Mark::kMistake) ++errors.mistakes;
        if (v.mark == Mark::kBlunder) ++errors.blunders;
      }
      if (progress) progress(level, errors.games);
    }
    out.push_back(errors);
  }
  return out;
}

}  // namespace ply
