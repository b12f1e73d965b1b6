// A game's calibration ladder as it ships: each difficulty level's rating on the players' scale,
// fitted by `ply-engine ladder` (engine/tool/ladder.h) and kept as a small text file in the
// game's own folder (games/GAME/ladder.txt, compiled in). The registry hands it out with the
// game (GameInfo::ladder); the lobby seeds the bot players' ratings from it and shows it beside
// each level until people's games have moved the bot's own rating.
//
// The file, line by line ('#' starts a comment):
//   command: ply-engine ladder connect4 --games 20 --nodes-per-ms 100
//   levels: 9c2f...                 (LevelsFingerprint of the levels the ladder played)
//   LEVEL RATING ERROR GAMES        (one line per player, anchors included; ERROR is the
//                                    half-width of the 95% interval, 0 for the fixed anchor)
#ifndef PLY_ENGINE_REGISTRY_LADDER_DATA_H_
#define PLY_ENGINE_REGISTRY_LADDER_DATA_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/search/difficulty.h"

namespace ply {

struct LadderRating {
  std::string name;
  double rating = 0;
  // Half-width of the 95% interval; 0 for the anchor.
  double error = 0;
  int games = 0;
};

struct LadderData {
  // The command that produced the ratings (rerun it to refresh them).
  std::string command;
  // LevelsFingerprint of the game's levels when it ran: a level retuned since differs.
  std::string levels;
  std::vector<LadderRating> ratings;

  bool empty() const { return ratings.empty(); }
  // The rating of `name`, or nullptr.
  const LadderRating* Find(std::string_view name) const;
};

// A game's own decisions that hang on a level's budget and are not dials of the level (Reversi:
// how many empty cells its endgame solver takes on), as text for one level at a budget of
// `max_nodes` nodes (0: none) and `time_ms` milliseconds (0: none); empty where the level makes
// none. GameInfo::budget_plans; games without such decisions have none.
using BudgetPlans =
    std::function<std::string(const Difficulty& level, int64_t max_nodes, int64_t time_ms)>;

// A short hash of every dial of every level, in order (16 hex digits): what a ladder result
// holds for. With `plans`, each level's plan text at the budget the ladder gives it (its time_ms
// times `nodes_per_ms` nodes when that is > 0, else its own clock: a clock ladder's --time-ms
// cap is not modelled, the shipped ladders all run on node budgets) is folded in after the
// level's dials; a level whose plan text is empty hashes as without `plans`, so games without such
// decisions keep their fingerprints.
std::string LevelsFingerprint(const std::vector<Difficulty>& levels,
                              const BudgetPlans& plans = nullptr, int64_t nodes_per_ms = 0);
// The --nodes-per-ms N of a ladder command, 0 when it has none (a clock ladder).
int64_t LadderNodesPerMs(std::string_view command);

// INVALID_ARGUMENT naming the line for anything but the format above.
absl::StatusOr<LadderData> ParseLadder(std::string_view text);
// The file's text; ParseLadder(FormatLadder(d)) gives d back (ratings to 0.1 point).
std::string FormatLadder(const LadderData& data, std::string_view game);

// The shipped ladder of `game` (compiled in from games/GAME/ladder.txt); empty when the game has
// no file. A file that does not parse is a build mistake: the result is empty too and
// ShippedLadderError says why.
LadderData ShippedLadder(std::string_view game);
absl::Status ShippedLadderError(std::string_view game);

}  // namespace ply

#endif  // PLY_ENGINE_REGISTRY_LADDER_DATA_H_
