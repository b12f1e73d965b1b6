// ply-engine's game-analysis subcommands (ply_engine_analysis.h): the lobby's post-game
// analysis run here on one game, and the self-play measurements that calibrate it.
#include "engine/tool/ply_engine_analysis.h"

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "engine/analysis/analysis.h"
#include "engine/analysis/fit.h"
#include "engine/registry/any_game.h"
#include "engine/tool/analysis_tool.h"
#include "engine/tool/ply_engine_flags.h"
#include "nlohmann/json.hpp"

namespace ply {
namespace {

using Json = nlohmann::ordered_json;

AnalysisLimits JudgeLimitsFromFlags() {
  return {.time_ms = absl::GetFlag(FLAGS_judge_ms), .max_depth = absl::GetFlag(FLAGS_judge_depth)};
}

}  // namespace

// One game's moves judged here, move by move (what `ply analyze` gets from the lobby).
int AnalyzeGameCommand(const std::vector<std::string>& args, const GameOptions& options) {
  if (args.size() != 1) return Usage("analyze-game needs GAME and --moves");
  SearchCache cache(absl::GetFlag(FLAGS_tt_mb));
  auto analysis = AnalyzeGame(args[0], options, SplitMoves(absl::GetFlag(FLAGS_moves)),
                              JudgeLimitsFromFlags(), &cache);
  if (!analysis.ok()) return Fail(analysis.status());
  Json moves = Json::array();
  for (const MoveVerdict& v : analysis->moves) {
    moves.push_back({{"ply", v.ply + 1},
                     {"player", v.player},
                     {"move", v.move},
                     {"before", v.before},
                     {"before_exact", v.before_exact},
                     {"before_text", v.before_text},
                     {"after", v.after},
                     {"after_exact", v.after_exact},
                     {"after_text", v.after_text},
                     {"win_before", v.win_before},
                     {"win_after", v.win_after},
                     {"best", v.best_move},
                     {"line", v.best_line},
                     {"mark", MarkName(v.mark)},
                     {"exact_verdict", v.exact_verdict},
                     {"accuracy", v.accuracy}});
  }
  Json players = Json::array();
  for (const PlayerSummary& p : analysis->players) {
    players.push_back({{"moves", p.moves},
                       {"accuracy", p.accuracy},
                       {"inaccuracies", p.inaccuracies},
                       {"mistakes", p.mistakes},
                       {"blunders", p.blunders}});
  }
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << Json{{"game", args[0]}, {"moves", moves}, {"players", players}}.dump() << "\n";
    return 0;
  }
  for (const MoveVerdict& v : analysis->moves) {
    std::cout << absl::StrFormat(
        "%3d. %-6s %-3s before %12s (%3.0f%%)%s  after %12s (%3.0f%%)%s  "
        "best %-6s %s\n",
        v.ply + 1, v.move, MarkSymbol(v.mark), v.before_text, 100 * v.win_before,
        v.before_exact ? "!" : " ", v.after_text, 100 * v.win_after, v.after_exact ? "!" : " ",
        v.best_move, v.exact_verdict ? "exact" : "");
  }
  for (int p = 0; p < 2; ++p) {
    const PlayerSummary& s = analysis->players[p];
    auto counted = [](int n, const char* one, const char* many) {
      return absl::StrCat(n, " ", n == 1 ? one : many);
    };
    std::cout << absl::StrFormat("player %d: accuracy %.1f%%  %s, %s, %s in %s\n", p + 1,
                                 s.accuracy, counted(s.inaccuracies, "inaccuracy", "inaccuracies"),
                                 counted(s.mistakes, "mistake", "mistakes"),
                                 counted(s.blunders, "blunder", "blunders"),
                                 counted(s.moves, "move", "moves"));
  }
  return 0;
}

// Plays self-play games, judges their positions and fits the game's win-chance curve.
int FitWinChanceCommand(const std::vector<std::string>& args, const GameOptions& options,
                        const std::string& command_line) {
  if (args.size() != 1) return Usage("fit-winchance needs GAME");
  const bool json = absl::GetFlag(FLAGS_json);
  auto data = CollectWinChanceSamples(
      MatchConfigFromFlags(args[0], options), JudgeLimitsFromFlags(), [json](int game, int games) {
        if (!json) std::cerr << "game " << game << "/" << games << " judged\n";
      });
  if (!data.ok()) return Fail(data.status());
  auto curve = FitWinChance(data->samples, data->games);
  if (!curve.ok()) return Fail(curve.status());
  const WinChanceFit fit = MeasureFit(data->samples, curve->scale);
  if (json) {
    Json bins = Json::array();
    for (const WinChanceFit::Bin& b : fit.bins) {
      bins.push_back({{"from", b.from},
                      {"to", b.to},
                      {"count", b.count},
                      {"predicted", b.predicted},
                      {"observed", b.observed}});
    }
    std::cout << Json{{"game", args[0]},
                      {"scale", curve->scale},
                      {"games", curve->games},
                      {"samples", curve->samples},
                      {"log_loss", fit.log_loss},
                      {"log_loss_even", fit.log_loss_even},
                      {"log_loss_base", fit.log_loss_base},
                      {"brier", fit.brier},
                      {"scale_low", fit.scale_low},
                      {"scale_high", fit.scale_high},
                      {"bins", bins}}
                     .dump()
              << "\n";
    return 0;
  }
  std::string header =
      WinChanceHeader(args[0], WinChanceConstantName(args[0]), *curve, command_line, fit);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty() || out == "-") {
    std::cout << header;
  } else {
    std::ofstream file(out, std::ios::trunc);
    file << header;
    if (!file) return Fail(absl::UnavailableError(absl::StrCat("cannot write ", out)));
    std::cout << absl::StrFormat("scale %.6g from %d scores of %d games, written to %s\n",
                                 curve->scale, curve->samples, curve->games, out)
              << FitText(fit);
  }
  return 0;
}

// Each level against --b, every game analysed: the levels' errors per 100 moves.
int ErrorRatesCommand(const std::vector<std::string>& args, const GameOptions& options) {
  if (args.size() != 1) return Usage("error-rates needs GAME");
  const bool json = absl::GetFlag(FLAGS_json);
  std::vector<std::string> levels =
      absl::StrSplit(absl::GetFlag(FLAGS_levels), ',', absl::SkipEmpty());
  MatchConfig config = MatchConfigFromFlags(args[0], options);
  auto rates = MeasureErrorRates(config, levels, JudgeLimitsFromFlags(),
                                 [json](const std::string& level, int game) {
                                   if (!json)
                                     std::cerr << level << ": game " << game << " analysed\n";
                                 });
  if (!rates.ok()) return Fail(rates.status());
  if (json) {
    Json rows = Json::array();
    for (const LevelErrors& e : *rates) {
      rows.push_back({{"level", e.level},
                      {"games", e.games},
                      {"moves", e.moves},
                      {"inaccuracies_per_100", e.Per100(e.inaccuracies)},
                      {"mistakes_per_100", e.Per100(e.mistakes)},
                      {"blunders_per_100", e.Per100(e.blunders)},
                      {"accuracy", e.Accuracy()}});
    }
    std::cout << Json{{"game", args[0]}, {"opponent", config.level_b}, {"levels", rows}}.dump()
              << "\n";
    return 0;
  }
  std::cout << absl::StrFormat("%s, each level against %s, %d games each; per 100 of its moves:\n",
                               args[0], config.level_b, config.games);
  std::cout
      << "| level | games | moves | ?! | ? | ?? | accuracy |\n|---|---|---|---|---|---|---|\n";
  for (const LevelErrors& e : *rates) {
    std::cout << absl::StrFormat("| %s | %d | %d | %.1f | %.1f | %.1f | %.1f%% |\n", e.level,
                                 e.games, e.moves, e.Per100(e.inaccuracies), e.Per100(e.mistakes),
                                 e.Per100(e.blunders), e.Accuracy());
  }
  return 0;
}

}  // namespace ply
