// Players' calls, the Lobby's part: login and registration (the rules are Accounts':
// players/accounts.h), a player's profile, matches and the leaderboard.
#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log_text.h"
#include "engine/registry/registry.h"
#include "lobby-server/convert.h"
#include "lobby-server/lobby.h"
#include "lobby-server/match/rules.h"
#include "lobby-server/names.h"
#include "lobby-server/token.h"

namespace ply::lobby {

absl::StatusOr<std::optional<PlayerRecord>> Lobby::PlayerOf(const std::string& key) {
  return accounts_.PlayerOf(key);
}

absl::StatusOr<std::string> Lobby::GuestName(std::string_view raw) {
  return accounts_.GuestName(raw);
}

absl::StatusOr<v1::LoginResponse> Lobby::Login(const v1::LoginRequest& req,
                                               const std::string& player_key,
                                               const std::string& client) {
  v1::LoginResponse response;
  if (!player_key.empty()) {
    absl::StatusOr<std::optional<PlayerRecord>> player = PlayerOf(player_key);
    if (!player.ok()) return player.status();
    if (!req.name().empty() && !absl::EqualsIgnoreCase(req.name(), (*player)->name)) {
      return absl::PermissionDeniedError(absl::StrCat("that key is ", (*player)->name, "'s, not ",
                                                      EchoBounded(req.name(), 24), "'s"));
    }
    v1::GetPlayerRequest get;
    get.set_name((*player)->name);
    absl::StatusOr<v1::Player> profile = GetPlayer(get);
    if (!profile.ok()) return profile.status();
    *response.mutable_player() = *std::move(profile);
    return response;
  }
  absl::StatusOr<std::pair<PlayerRecord, std::string>> registered =
      accounts_.Register(req.name(), client);
  if (!registered.ok()) return registered.status();
  const auto& [made, key] = *registered;
  response.mutable_player()->set_name(made.name);
  response.mutable_player()->set_created_ms(made.created_ms);
  response.mutable_player()->set_last_seen_ms(made.last_seen_ms);
  response.set_player_key(key);
  return response;
}

namespace {

// A player not found whose name is a bot level's ("hard"): the level is a player as bot:hard.
absl::Status NotFoundHint(const std::string& name, absl::Status status) {
  if (!absl::IsNotFound(status)) return status;
  for (const GameInfo& g : ListGames()) {
    if (FindLevel(g.levels, name) != nullptr) {
      return absl::NotFoundError(
          absl::StrCat(status.message(), "; bot levels are players as bot:LEVEL (bot:", name, ")"));
    }
  }
  return status;
}

}  // namespace

absl::StatusOr<v1::Player> Lobby::GetPlayer(const v1::GetPlayerRequest& req) {
  if (req.name().empty() || req.name().size() > 32) {
    return absl::InvalidArgumentError("name a player (2 to 24 characters)");
  }
  absl::StatusOr<PlayerRecord> p = store_->LoadPlayer(req.name());
  if (!p.ok()) return NotFoundHint(req.name(), p.status());
  v1::Player out;
  out.set_name(p->name);
  out.set_bot(p->bot);
  out.set_created_ms(p->created_ms);
  out.set_last_seen_ms(p->last_seen_ms);
  for (const GameRatingRecord& g : p->ratings) *out.add_ratings() = RatingToProto(g);
  return out;
}

absl::StatusOr<v1::ListMatchesResponse> Lobby::ListPlayerMatches(
    const v1::ListPlayerMatchesRequest& req) {
  if (req.name().empty() || req.name().size() > 32 || req.game().size() > kMaxTextBytes) {
    return absl::InvalidArgumentError("name a player (2 to 24 characters)");
  }
  absl::StatusOr<PlayerRecord> p = store_->LoadPlayer(req.name());
  if (!p.ok()) return NotFoundHint(req.name(), p.status());
  const int limit = req.page_size() <= 0 ? 20 : std::min(req.page_size(), 200);
  int64_t before = 0;
  if (!req.page_token().empty() && (!absl::SimpleAtoi(req.page_token(), &before) || before <= 0)) {
    return absl::InvalidArgumentError("that page token did not come from ListPlayerMatches");
  }
  absl::StatusOr<std::vector<MatchRecord>> found =
      store_->PlayerMatches(p->id, req.game(), before, limit);
  if (!found.ok()) return found.status();
  v1::ListMatchesResponse response;
  for (const MatchRecord& r : *found) *response.add_matches() = SummaryToProto(r);
  if (static_cast<int>(found->size()) == limit) {
    response.set_next_page_token(absl::StrCat(found->back().id));
  }
  return response;
}

absl::StatusOr<v1::LeaderboardResponse> Lobby::Leaderboard(const v1::LeaderboardRequest& req) {
  if (FindGame(req.game()) == nullptr) {
    return absl::InvalidArgumentError("name a game this lobby offers (ply games)");
  }
  const int limit = req.limit() <= 0 ? 20 : std::min(req.limit(), 100);
  absl::StatusOr<std::vector<LeaderboardRow>> rows = store_->Leaderboard(req.game(), limit);
  if (!rows.ok()) return rows.status();
  v1::LeaderboardResponse response;
  int rank = 0;
  for (const LeaderboardRow& r : *rows) {
    v1::LeaderboardEntry* e = response.add_entries();
    e->set_rank(++rank);
    e->set_name(r.name);
    e->set_bot(r.bot);
    e->set_rating(static_cast<int>(std::lround(r.rating.rating)));
    e->set_deviation(static_cast<int>(std::lround(r.rating.deviation)));
    e->set_games(r.rating.games);
  }
  return response;
}

}  // namespace ply::lobby
