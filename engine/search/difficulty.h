// Difficulty levels are data: four dials (depth cap, random-move chance at the root, evaluation
// noise at the leaves, time budget) plus a flag for "prove the result when possible". Named
// levels come from one table; a game may publish its own table (Game::Levels()), usually
// starting from DefaultLevels(). Adding a level is adding one entry.
#ifndef PLY_ENGINE_SEARCH_DIFFICULTY_H_
#define PLY_ENGINE_SEARCH_DIFFICULTY_H_

#include <string>
#include <string_view>
#include <vector>

namespace ply {

struct Difficulty {
  std::string name;
  // Deepest iteration searched; 0 means no cap.
  int max_depth = 0;
  // Chance in [0, 1] of playing a uniformly random legal move instead of searching.
  double random_move_chance = 0.0;
  // Leaf evaluations are moved by a pseudo-random amount in [-eval_noise, +eval_noise].
  int eval_noise = 0;
  // Thinking time per move in milliseconds.
  int time_ms = 1000;
  // Use the game's exact solver (if it has one) or search until the result is proven.
  bool perfect = false;
  // Empty: the alpha-beta search with the dials above. Otherwise the name of a game-specific
  // player that replaces the search (e.g. Gomoku's one-ply "greedy" baseline); the game offers
  // it as `static std::optional<SearchResult<Move>> PlayPolicy(G&, std::string_view policy,
  // const SearchLimits&)`.
  std::string policy;
  std::string description;
};

// beginner, easy, medium, hard (in rising strength).
std::vector<Difficulty> DefaultLevels();
// DefaultLevels() plus `perfect`, for games the engine can solve within the budget.
std::vector<Difficulty> LevelsWithPerfect(int perfect_time_ms);

// The level called `name`, or nullptr.
const Difficulty* FindLevel(const std::vector<Difficulty>& levels, std::string_view name);

}  // namespace ply

#endif  // PLY_ENGINE_SEARCH_DIFFICULTY_H_
