// Engine-versus-engine matches between two difficulty levels of one game, for `ply-engine match`
// and the strength tests. Games alternate colours over the same openings (a few random plies
// from a seed), so neither side profits from moving first; the result comes with an Elo
// difference and its 95% error bar.
#ifndef PLY_ENGINE_TOOL_MATCH_H_
#define PLY_ENGINE_TOOL_MATCH_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/options.h"
#include "engine/registry/any_game.h"
#include "engine/search/difficulty.h"

namespace ply {

struct MatchConfig {
  std::string game;
  GameOptions options;
  std::string level_a;
  std::string level_b;
  int games = 10;
  uint64_t seed = 1;
  // Random plies played before the engines take over; each opening is played twice.
  int opening_plies = 2;
  // Per-move caps applied to both levels (0: the levels' own).
  int64_t time_ms = 0;
  int64_t max_nodes = 0;
  // When > 0, every level thinks for a node budget instead of a time budget: its own time_ms
  // times this many nodes, with no clock at all (time_ms and max_nodes above are then ignored).
  // A match played that way is the same on a busy machine as on an idle one, move for move.
  int64_t nodes_per_ms = 0;
  size_t tt_megabytes = 16;
  // Players the game's own levels do not have (the ladder's anchors), found by name too.
  std::vector<Difficulty> extra_levels;
};

struct GameRecord {
  std::vector<std::string> moves;
  // Player index of level A in this game (0 moves first).
  int a_player = 0;
  // +1 A won, 0 draw, -1 A lost.
  int result_for_a = 0;
  std::string reason;
};

struct MatchResult {
  int wins = 0;  // for A
  int draws = 0;
  int losses = 0;
  std::vector<GameRecord> records;

  int games() const { return wins + draws + losses; }
  // A's score fraction in [0, 1].
  double Score() const;
  // The Elo line, EloSummary's (below): one formatting of sweeps, draws and small matches for
  // ply-engine match and pbrain-match alike.
  std::string EloText() const;
};

// Plays the match; `on_game` (optional) is called after each game.
absl::StatusOr<MatchResult> RunMatch(const MatchConfig& config,
                                     const std::function<void(const GameRecord&)>& on_game = {});

// Elo difference for a score fraction p (clamped away from 0 and 1).
double EloFromScore(double p);

// The Elo line of a match from A's side, as pbrain-match prints it. Normally the estimate with
// the 95% interval of the normal approximation of the mean game score:
//   "Elo +108 (95%: -33 .. +298)"
// Where that says nothing finite, something honest instead (with "(95%: " after any games):
//   all won (or lost):  "Elo: no estimate, all 2 games won (95%: at least -216)", the exact
//                       one-sided bound: a mean score below 0.05^(1/n) gives n wins out of n
//                       less than 5% of the time (draws or not);
//   all drawn:          "Elo +0, all 4 games drawn (95%: -301 .. +301, Wilson's interval)";
//   too few games (the normal interval leaves (0, 1)), here 1-1:
//                       "Elo +0 (95%: -393 .. +393, Wilson's interval: too few games for the
//                       normal one)";
//   no games:           "Elo: no estimate, no games played".
// Wilson's score interval takes a game's variance at its most for the mean, p(1 - p), so with
// draws it is on the wide side; it lies inside (0, 1) when 0 < p < 1.
std::string EloSummary(int wins, int draws, int losses);

// EloSummary's numbers, rounded as it prints them: the estimate and the 95% interval's ends;
// for a sweep no estimate and only the one-sided bound (`low` when all were won, `high` when
// all were lost); nothing without games.
struct EloRange {
  std::optional<double> estimate;
  std::optional<double> low;
  std::optional<double> high;
};
EloRange EloEstimate(int wins, int draws, int losses);

}  // namespace ply

#endif  // PLY_ENGINE_TOOL_MATCH_H_
