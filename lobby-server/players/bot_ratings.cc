// Bot levels on the players' scale, the Lobby's part: each bot level's player holds the rating
// its game's calibration ladder gives it (engine/registry/ladder_data.h), a fixed point of the
// scale that games against people never move (rating/ratings.h), and ListGames shows beside
// each level how many rated games it has played.
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/registry/registry.h"
#include "lobby-server/lobby.h"

namespace ply::lobby {

std::vector<BotLevelRating> LadderSeeds() {
  std::vector<BotLevelRating> seeds;
  for (const GameInfo& info : ply::ListGames()) {
    for (const Difficulty& level : info.levels) {
      const LadderRating* r = info.ladder.Find(level.name);
      if (r == nullptr) continue;
      // The ladder's 95% half-width is 1.96 standard deviations, and a Glicko deviation is one
      // (both on the logistic 400-point scale); floored so that people's games still move it.
      seeds.push_back({.game = info.name,
                       .level = level.name,
                       .rating = r->rating,
                       .deviation = std::clamp(r->error / 1.96, 30.0, 350.0)});
    }
  }
  return seeds;
}

absl::Status Lobby::SeedBotRatings() { return store_->SeedBotRatings(LadderSeeds()); }

void Lobby::ShowLiveBotRatings(v1::ListGamesResponse& response) {
  absl::StatusOr<std::vector<BotLevelRating>> live = store_->BotLevelRatings();
  // Without the database the ladder's numbers still stand.
  if (!live.ok()) return;
  std::map<std::pair<std::string, std::string>, const BotLevelRating*> by_level;
  for (const BotLevelRating& r : *live) by_level[{r.game, r.level}] = &r;
  for (v1::GameInfo& game : *response.mutable_games()) {
    for (v1::DifficultyLevel& level : *game.mutable_levels()) {
      auto it = by_level.find({game.name(), level.name()});
      if (it == by_level.end()) continue;
      level.set_rated_games(it->second->games);
    }
  }
}

}  // namespace ply::lobby
