#include "engine/tool/ladder.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "engine/registry/registry.h"
#include "engine/tool/match.h"

namespace ply {
namespace {

// Expected score of a player rated `r` against one rated `s`.
double Expected(double r, double s) { return 1.0 / (1.0 + std::pow(10.0, (s - r) / 400.0)); }

}  // namespace

Difficulty RandomAnchor() {
  return {.name = "random",
          .max_depth = 1,
          .random_move_chance = 1.0,
          .time_ms = 1,
          .description = "plays a uniformly random legal move"};
}

Difficulty GreedyAnchor() {
  return {.name = "greedy",
          .max_depth = 1,
          .time_ms = 50,
          .description = "plays the move its evaluation likes best one ply ahead"};
}

std::vector<LadderRating> FitRatings(const std::vector<std::string>& players,
                                     const std::vector<PairResult>& results, int anchor,
                                     double anchor_rating) {
  const size_t n = players.size();
  // Games and points of each pairing, with one draw of prior per pairing played.
  struct Edge {
    int a, b;
    double games, points_a;
  };
  std::vector<Edge> edges;
  std::vector<int> played(n, 0);
  for (const PairResult& r : results) {
    const int games = r.wins + r.draws + r.losses;
    if (games == 0) continue;
    edges.push_back({r.a, r.b, games + 1.0, r.wins + 0.5 * r.draws + 0.5});
    played[r.a] += games;
    played[r.b] += games;
  }
  std::vector<double> rating(n, anchor_rating);
  // Newton's method on the log-likelihood, one player at a time (it converges in a few dozen
  // sweeps for ladders of this size).
  for (int sweep = 0; sweep < 500; ++sweep) {
    double largest = 0;
    for (size_t i = 0; i < n; ++i) {
      if (static_cast<int>(i) == anchor) continue;
      double gradient = 0, curvature = 0;
      for (const Edge& e : edges) {
        if (e.a != static_cast<int>(i) && e.b != static_cast<int>(i)) continue;
        const bool is_a = e.a == static_cast<int>(i);
        const double other = rating[is_a ? e.b : e.a];
        const double p = Expected(rating[i], other);
        const double points = is_a ? e.points_a : e.games - e.points_a;
        gradient += points - e.games * p;
        curvature += e.games * p * (1 - p);
      }
      if (curvature <= 0) continue;
      // In Elo points: d/dr of the expected score is ln(10)/400 * p(1-p).
      const double k = std::log(10.0) / 400.0;
      const double step = gradient / (k * curvature);
      rating[i] += std::clamp(step, -400.0, 400.0);
      largest = std::max(largest, std::abs(step));
    }
    if (largest < 0.01) break;
  }
  std::vector<LadderRating> out;
  for (size_t i = 0; i < n; ++i) {
    double information = 0;
    for (const Edge& e : edges) {
      if (e.a != static_cast<int>(i) && e.b != static_cast<int>(i)) continue;
      const double p = Expected(rating[e.a], rating[e.b]);
      information += e.games * p * (1 - p);
    }
    const double k = std::log(10.0) / 400.0;
    const double error =
        static_cast<int>(i) == anchor || information <= 0 ? 0 : 1.96 / (k * std::sqrt(information));
    out.push_back({.name = players[i], .rating = rating[i], .error = error, .games = played[i]});
  }
  return out;
}

absl::StatusOr<std::vector<LadderRating>> RunLadder(
    const LadderConfig& config,
    const std::function<void(const std::string&, const std::string&, const PairResult&)>& on_pair) {
  const GameInfo* info = FindGame(config.game);
  if (info == nullptr) return CreateGame(config.game).status();
  // A game's own level named like an anchor (Gomoku's pattern-scoring "greedy") takes the
  // anchor's place, so that each name is rated once.
  std::vector<Difficulty> players = {RandomAnchor(), GreedyAnchor()};
  for (Difficulty& anchor : players) {
    if (const Difficulty* own = FindLevel(info->levels, anchor.name)) anchor = *own;
  }
  for (const Difficulty& d : info->levels) {
    if (FindLevel(players, d.name) == nullptr) players.push_back(d);
  }
  std::vector<std::string> names;
  for (const Difficulty& d : players) names.push_back(d.name);
  std::vector<PairResult> results;
  for (size_t gap = 1; gap <= 2; ++gap) {
    for (size_t a = 0; a + gap < players.size(); ++a) {
      const size_t b = a + gap;
      MatchConfig match{.game = config.game,
                        .options = config.options,
                        .level_a = players[b].name,
                        .level_b = players[a].name,
                        .games = config.games,
                        .seed = config.seed + 7919 * (a * 16 + b),
                        .opening_plies = config.opening_plies,
                        .time_ms = config.time_ms,
                        .nodes_per_ms = config.nodes_per_ms,
                        .tt_megabytes = config.tt_megabytes,
                        .extra_levels = {RandomAnchor(), GreedyAnchor()}};
      absl::StatusOr<MatchResult> r = RunMatch(match);
      if (!r.ok()) return r.status();
      PairResult pair{.a = static_cast<int>(b),
                      .b = static_cast<int>(a),
                      .wins = r->wins,
                      .draws = r->draws,
                      .losses = r->losses};
      results.push_back(pair);
      if (on_pair) on_pair(players[b].name, players[a].name, pair);
    }
  }
  return FitRatings(names, results, /*anchor=*/0, kRandomAnchor);
}

}  // namespace ply
