// The calibration ladder: every difficulty level of a game on one rating scale, fitted from
// games between them and two fixed anchors, a uniformly random mover and a one-ply greedy
// player. Each player meets its neighbours in strength and the ones two steps away; the ratings
// are the maximum-likelihood Elo ratings of all those games (a draw counts half), with the
// random mover held at kRandomAnchor, and a 95% error bar from the fit's curvature. This is
// what a bot level's rating is, before rated games against people move it.
#ifndef PLY_ENGINE_TOOL_LADDER_H_
#define PLY_ENGINE_TOOL_LADDER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/options.h"
#include "engine/registry/ladder_data.h"
#include "engine/search/difficulty.h"

namespace ply {

// The random mover's rating: an arbitrary origin, low enough that every level sits above it.
inline constexpr double kRandomAnchor = 400;

// Games between two players: wins and draws of `a` over `b`.
struct PairResult {
  int a = 0;
  int b = 0;
  int wins = 0;
  int draws = 0;
  int losses = 0;
};

// Maximum-likelihood Elo ratings of `players` from `results`, player `anchor` held at
// `anchor_rating`. A player that won or lost every game is pulled towards its opponents by a
// weak prior (one draw against each), so that the fit stays finite.
std::vector<LadderRating> FitRatings(const std::vector<std::string>& players,
                                     const std::vector<PairResult>& results, int anchor,
                                     double anchor_rating);

// The random mover and greedy player of the ladder.
Difficulty RandomAnchor();
Difficulty GreedyAnchor();

struct LadderConfig {
  std::string game;
  GameOptions options;
  // Games for each pairing (colours alternate).
  int games = 20;
  uint64_t seed = 1;
  int opening_plies = 2;
  // Per-move time for every player (0: each level's own).
  int64_t time_ms = 0;
  // When > 0, a node budget instead: each level's own time_ms times this (see MatchConfig).
  // The result then does not depend on the machine's load, and a rerun gives the same games.
  int64_t nodes_per_ms = 0;
  size_t tt_megabytes = 16;
};

// Plays the ladder; `on_pair` (optional) is told of each pairing when it is done.
absl::StatusOr<std::vector<LadderRating>> RunLadder(
    const LadderConfig& config,
    const std::function<void(const std::string&, const std::string&, const PairResult&)>& on_pair =
        {});

}  // namespace ply

#endif  // PLY_ENGINE_TOOL_LADDER_H_
