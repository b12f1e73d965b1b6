#include "engine/tool/match.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/core/random.h"
#include "engine/registry/registry.h"

namespace ply {

double EloFromScore(double p) {
  p = std::clamp(p, 1e-3, 1 - 1e-3);
  return -400.0 * std::log10(1.0 / p - 1.0);
}

double MatchResult::Score() const { return games() == 0 ? 0.5 : (wins + 0.5 * draws) / games(); }

namespace {

// The variance of one game's score (1, 1/2 or 0) about the mean score p, over the games played.
double ScoreVariance(int wins, int draws, int losses, double p) {
  return (wins * (1 - p) * (1 - p) + draws * (0.5 - p) * (0.5 - p) + losses * p * p) /
         (wins + draws + losses);
}

// Elo for a score fraction strictly inside (0, 1), unclamped and rounded as printed; never -0.
double EloValue(double p) {
  const double elo = std::round(-400.0 * std::log10(1.0 / p - 1.0));
  return elo == 0 ? 0.0 : elo;
}

std::string EloNumber(double p) { return absl::StrFormat("%+.0f", EloValue(p)); }

// The estimate, the 95% interval and the line that words them, computed once for both.
struct EloWords {
  EloRange range;
  std::string text;
};

EloWords DescribeElo(int wins, int draws, int losses) {
  const int n = wins + draws + losses;
  if (n <= 0) return {{}, "Elo: no estimate, no games played"};
  const std::string games = n == 1 ? "the one game" : absl::StrCat("all ", n, " games");
  if (wins == n || losses == n) {
    const double bound = std::pow(0.05, 1.0 / n);  // of the winner's score
    if (wins == n) {
      return {
          {.low = EloValue(bound)},
          absl::StrFormat("Elo: no estimate, %s won (95%%: at least %s)", games, EloNumber(bound))};
    }
    return {{.high = EloValue(1 - bound)},
            absl::StrFormat("Elo: no estimate, %s lost (95%%: at most %s)", games,
                            EloNumber(1 - bound))};
  }
  const double p = (wins + 0.5 * draws) / n;
  constexpr double kZ = 1.96;
  const double variance = ScoreVariance(wins, draws, losses, p);
  const double half = kZ * std::sqrt(variance / n);
  if (draws < n && p - half > 0 && p + half < 1) {
    return {{EloValue(p), EloValue(p - half), EloValue(p + half)},
            absl::StrFormat("Elo %s (95%%: %s .. %s)", EloNumber(p), EloNumber(p - half),
                            EloNumber(p + half))};
  }
  const double z2n = kZ * kZ / n;
  const double centre = (p + z2n / 2) / (1 + z2n);
  const double wilson = kZ * std::sqrt(p * (1 - p) / n + z2n / (4.0 * n)) / (1 + z2n);
  const EloRange range{EloValue(p), EloValue(centre - wilson), EloValue(centre + wilson)};
  const std::string interval =
      absl::StrCat(EloNumber(centre - wilson), " .. ", EloNumber(centre + wilson));
  if (draws == n) {
    return {range, absl::StrFormat("Elo %s, %s drawn (95%%: %s, Wilson's interval)", EloNumber(p),
                                   games, interval)};
  }
  return {range,
          absl::StrFormat("Elo %s (95%%: %s, Wilson's interval: too few games for the normal one)",
                          EloNumber(p), interval)};
}

}  // namespace

EloRange EloEstimate(int wins, int draws, int losses) {
  return DescribeElo(wins, draws, losses).range;
}

std::string EloSummary(int wins, int draws, int losses) {
  return DescribeElo(wins, draws, losses).text;
}

std::string MatchResult::EloText() const { return EloSummary(wins, draws, losses); }

absl::StatusOr<MatchResult> RunMatch(const MatchConfig& config,
                                     const std::function<void(const GameRecord&)>& on_game) {
  const GameInfo* info = FindGame(config.game);
  if (info == nullptr) return CreateGame(config.game).status();
  const auto find = [&](const std::string& name) {
    const Difficulty* d = FindLevel(info->levels, name);
    return d != nullptr ? d : FindLevel(config.extra_levels, name);
  };
  const Difficulty* levels[2] = {find(config.level_a), find(config.level_b)};
  for (int i = 0; i < 2; ++i) {
    if (levels[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown level '", i == 0 ? config.level_a : config.level_b, "' for ", config.game));
    }
  }
  absl::StatusOr<std::unique_ptr<AnyGame>> start = CreateGame(config.game, config.options);
  if (!start.ok()) return start.status();

  SearchCache caches[2] = {SearchCache(config.tt_megabytes), SearchCache(config.tt_megabytes)};
  MatchResult result;
  Rng opening_rng(config.seed);
  std::vector<std::string> opening;
  for (int g = 0; g < config.games; ++g) {
    std::unique_ptr<AnyGame> game = (*start)->Clone();
    // A fresh opening for each pair of games; the second game of a pair swaps colours.
    if (g % 2 == 0) {
      opening.clear();
      std::unique_ptr<AnyGame> probe = (*start)->Clone();
      for (int i = 0; i < config.opening_plies && !probe->Status().over; ++i) {
        std::vector<std::string> legal = probe->LegalMoves();
        opening.push_back(legal[opening_rng.Below(legal.size())]);
        (void)probe->Play(opening.back());
        // An opening that ends the game is useless: shorten it.
        if (probe->Status().over) opening.pop_back();
      }
    }
    GameRecord record;
    record.a_player = g % 2;
    for (const std::string& m : opening) (void)game->Play(m);
    uint64_t move_seed = Mix64(config.seed + 1000003 * static_cast<uint64_t>(g));
    while (!game->Status().over) {
      int side = game->SideToMove();
      int engine = side == record.a_player ? 0 : 1;
      SearchRequest request{.level = *levels[engine],
                            .time_ms = config.time_ms,
                            .max_nodes = config.max_nodes,
                            .seed = move_seed++};
      if (config.nodes_per_ms > 0) {
        request.max_nodes = std::max<int64_t>(1, levels[engine]->time_ms * config.nodes_per_ms);
        request.level.time_ms = 0;
        request.time_ms = 0;
      }
      absl::StatusOr<SearchReport> report = game->ChooseMove(request, &caches[engine]);
      if (!report.ok()) return report.status();
      absl::Status played = game->Play(report->move);
      if (!played.ok()) {
        return absl::InternalError(
            absl::StrCat("engine chose an illegal move '", report->move, "': ", played.message()));
      }
    }
    GameStatus status = game->Status();
    record.moves = game->History();
    record.reason = status.reason;
    record.result_for_a = status.winner < 0 ? 0 : status.winner == record.a_player ? 1 : -1;
    if (record.result_for_a > 0) ++result.wins;
    if (record.result_for_a == 0) ++result.draws;
    if (record.result_for_a < 0) ++result.losses;
    if (on_game) on_game(record);
    result.records.push_back(std::move(record));
  }
  return result;
}

}  // namespace ply
