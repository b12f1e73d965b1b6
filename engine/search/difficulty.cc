#include "engine/search/difficulty.h"

namespace ply {

std::vector<Difficulty> DefaultLevels() {
  return {
      {.name = "beginner",
       .max_depth = 2,
       .random_move_chance = 0.3,
       .eval_noise = 400,
       .time_ms = 100,
       .description = "looks two moves ahead and often plays at random"},
      {.name = "easy",
       .max_depth = 3,
       .random_move_chance = 0.1,
       .eval_noise = 150,
       .time_ms = 250,
       .description = "sees simple threats, misses deeper plans"},
      {.name = "medium",
       .max_depth = 7,
       .random_move_chance = 0.0,
       .eval_noise = 30,
       .time_ms = 500,
       .description = "a solid club player"},
      {.name = "hard",
       .max_depth = 0,
       .random_move_chance = 0.0,
       .eval_noise = 0,
       .time_ms = 1000,
       .description = "full strength within one second a move"},
  };
}

std::vector<Difficulty> LevelsWithPerfect(int perfect_time_ms) {
  std::vector<Difficulty> levels = DefaultLevels();
  levels.push_back({.name = "perfect",
                    .max_depth = 0,
                    .random_move_chance = 0.0,
                    .eval_noise = 0,
                    .time_ms = perfect_time_ms,
                    .perfect = true,
                    .description = "solves the position and never throws away a result"});
  return levels;
}

const Difficulty* FindLevel(const std::vector<Difficulty>& levels, std::string_view name) {
  for (const Difficulty& d : levels) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace ply
