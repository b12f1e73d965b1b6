// PostgresStore's players and their ratings (migration 6): accounts, a player's matches,
// the leaderboard, bot levels' ratings, and storing what a rated match's end does to its
// players' ratings (the rules and the arithmetic are rating/ratings.h's).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "lobby-server/rating/glicko2.h"
#include "lobby-server/rating/ratings.h"
#include "lobby-server/storage/postgres/internal.h"

namespace ply::lobby {
namespace pg {

// Players' and ratings' statements.
const StatementList& PlayerStatements() {
  static const StatementList statements = {
      // The two players of a rated match that has just ended (nothing when it is not rated).
      {"rated_seats",
       "SELECT s.seat, s.player_id, m.game, p.bot FROM seats s JOIN matches m ON m.id = s.match_id"
       " JOIN players p ON p.id = s.player_id"
       " WHERE s.match_id = $1 AND m.rated AND s.player_id IS NOT NULL ORDER BY s.seat"},
      {"ensure_rating",
       "INSERT INTO ratings (player_id, game, rating) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"},
      {"lock_rating",
       "SELECT rating, deviation, volatility FROM ratings WHERE player_id = $1 AND game = $2"
       " FOR UPDATE"},
      {"set_rating",
       "UPDATE ratings SET rating = $3, deviation = $4, volatility = $5, games = games + 1,"
       " wins = wins + $6, draws = draws + $7, losses = losses + $8"
       " WHERE player_id = $1 AND game = $2"},
      {"set_rating_after",
       "UPDATE seats SET rating_after = $3, rated_ms = $4 WHERE match_id = $1 AND seat = $2"},
      // Rated games between two people that moved their ratings, created since $3 (the pair
      // bound of rating/ratings.h), from the first one's seats (seats_by_player).
      {"pair_rated_games",
       "SELECT count(*)::integer FROM seats a JOIN seats b ON b.match_id = a.match_id"
       " AND b.player_id = $2 JOIN matches m ON m.id = a.match_id"
       " WHERE a.player_id = $1 AND a.rating_after > 0 AND b.rating_after > 0"
       " AND COALESCE(a.rated_ms, m.created_ms) >= $3 AND m.id <> $4"},
      // The pair's games are counted under this lock, so that two of them ending at once in
      // different games (whose rating rows are not the same) count each other.
      {"lock_pair", "SELECT pg_advisory_xact_lock(7140005, hashtext($1))"},
      {"set_rating_note", "UPDATE matches SET rating_note = $2 WHERE id = $1"},
      {"create_player",
       "INSERT INTO players (name, key_hash, created_ms, last_seen_ms, created_by, skeleton)"
       " VALUES ($1, $2, $3, $3, $4, $5) RETURNING id"},
      {"lock_skeleton", "SELECT pg_advisory_xact_lock(7140004, hashtext($1))"},
      {"player_by_skeleton", "SELECT name FROM players WHERE skeleton = $1 ORDER BY id LIMIT 1"},
      {"lock_registrations", "SELECT pg_advisory_xact_lock(7140003, hashtext($1))"},
      {"registrations_since",
       "SELECT count(*)::integer FROM players WHERE created_by = $1 AND created_ms >= $2"},
      {"player_by_key",
       "UPDATE players SET last_seen_ms = $2 WHERE key_hash = $1 RETURNING id, name, bot,"
       " created_ms, last_seen_ms"},
      {"player_by_name",
       "SELECT id, name, bot, created_ms, last_seen_ms FROM players WHERE lower(name) = lower($1)"},
      {"player_ratings",
       "SELECT game, rating, deviation, games, wins, draws, losses FROM ratings"
       " WHERE player_id = $1 ORDER BY game"},
      {"bot_player",
       "WITH made AS (INSERT INTO players (name, bot, created_ms, last_seen_ms)"
       "  VALUES ($1, true, $2, $2) ON CONFLICT DO NOTHING RETURNING id)"
       " SELECT id FROM made UNION ALL SELECT id FROM players WHERE lower(name) = lower($1)"},
      // A player's matches, newest first, from their seats (a match where they held both
      // seats is one row). Of one game: the same, the game read from each match until the page
      // is full, however far back (a bot level's rare game lies behind thousands of others).
      {"player_matches",
       absl::StrCat("SELECT ", kMatchColumns,
                    " FROM matches WHERE id IN (SELECT match_id FROM seats WHERE player_id = $1"
                    " AND ($2::bigint = 0 OR match_id < $2) ORDER BY match_id DESC"
                    " LIMIT 2 * $3::integer) ORDER BY id DESC LIMIT $3::integer")},
      {"player_game_matches",
       absl::StrCat("SELECT ", kMatchColumns,
                    " FROM matches WHERE game = $2 AND ($3::bigint = 0 OR id < $3) AND id IN"
                    " (SELECT match_id FROM seats WHERE player_id = $1)"
                    " ORDER BY id DESC LIMIT $4::integer")},
      {"leaderboard",
       "SELECT p.name, p.bot, r.rating, r.deviation, r.games, r.wins, r.draws, r.losses"
       " FROM ratings r JOIN players p ON p.id = r.player_id WHERE r.game = $1"
       " AND r.deviation <= $2 ORDER BY r.rating DESC LIMIT $3::integer"},
      {"bot_ratings",
       "SELECT p.name, r.rating FROM ratings r JOIN players p ON p.id = r.player_id"
       " WHERE p.bot AND r.game = $1"},
      // A bot level's rating: its ladder's, always (a fixed point of the scale, which games
      // against people never move: rating/ratings.h). A rating moved by games before bot levels
      // were fixed goes back to the ladder's.
      {"seed_bot_rating",
       "INSERT INTO ratings (player_id, game, rating, deviation) VALUES ($1, $2, $3, $4)"
       " ON CONFLICT (player_id, game) DO UPDATE SET rating = EXCLUDED.rating,"
       " deviation = EXCLUDED.deviation"},
      {"bot_level_ratings",
       "SELECT p.name, r.game, r.rating, r.deviation, r.games FROM ratings r"
       " JOIN players p ON p.id = r.player_id WHERE p.bot ORDER BY r.game, p.name"},
  };
  return statements;
}

void RateMatch(pqxx::transaction_base& tx, int64_t match_id, const MatchResult& result, int plies) {
  if (!ResultCounts(result, plies)) return;
  pqxx::result rows = tx.exec_prepared("rated_seats", match_id);
  if (rows.size() != 2) return;
  std::array<RatedSeat, 2> seats;
  for (int i = 0; i < 2; ++i) {
    seats[i].player_id = rows[i][1].as<int64_t>();
    seats[i].bot = rows[i][3].as<bool>();
  }
  // One player on both seats: RateResult moves nothing, and nothing is locked twice.
  if (seats[0].player_id == seats[1].player_id) return;
  const std::string game = rows[0][2].as<std::string>();
  // Locked in id order, so that two matches ending at once cannot deadlock on their players.
  for (int i : seats[0].player_id < seats[1].player_id ? std::array<int, 2>{0, 1}
                                                       : std::array<int, 2>{1, 0}) {
    tx.exec_prepared("ensure_rating", seats[i].player_id, game, NewcomerRating(game));
    pqxx::row r = tx.exec_prepared1("lock_rating", seats[i].player_id, game);
    seats[i].before = {.rating = r[0].as<double>(),
                       .deviation = r[1].as<double>(),
                       .volatility = r[2].as<double>()};
  }
  // Counted once both ratings and the pair are locked, so that two of the pair's games ending
  // at once count each other (the pair's lock is taken last: nothing waits while holding it).
  // By when each was rated, not begun: games left open for a day escaped the count.
  const int64_t now = NowMs();
  int pair_games = 0;
  if (!seats[0].bot && !seats[1].bot) {
    tx.exec_prepared("lock_pair",
                     absl::StrCat(std::min(seats[0].player_id, seats[1].player_id), ":",
                                  std::max(seats[0].player_id, seats[1].player_id)));
    pair_games = tx.exec_prepared1("pair_rated_games", seats[0].player_id, seats[1].player_id,
                                   now - int64_t{24} * 3600 * 1000, match_id)[0]
                     .as<int>();
  }
  const std::optional<std::array<SeatRating, 2>> rated =
      RateResult(seats, result, plies, pair_games);
  if (!rated) {
    if (pair_games >= kRatedGamesPerPairPerDay) {
      tx.exec_prepared("set_rating_note", match_id, PairBoundNote());
    }
    return;
  }
  for (int i = 0; i < 2; ++i) {
    const SeatRating& r = (*rated)[i];
    tx.exec_prepared("set_rating", seats[i].player_id, game, r.after.rating, r.after.deviation,
                     r.after.volatility, r.score == 1.0 ? 1 : 0, r.score == 0.5 ? 1 : 0,
                     r.score == 0.0 ? 1 : 0);
    tx.exec_prepared("set_rating_after", match_id, i, static_cast<int>(std::lround(r.after.rating)),
                     now);
  }
}

}  // namespace pg

namespace {

PlayerRecord PlayerFromRow(const pqxx::row& r) {
  return {.id = r[0].as<int64_t>(),
          .name = r[1].as<std::string>(),
          .bot = r[2].as<bool>(),
          .created_ms = r[3].as<int64_t>(),
          .last_seen_ms = r[4].as<int64_t>()};
}

GameRatingRecord RatingFromRow(const pqxx::row& r, int first) {
  return {.rating = r[first].as<double>(),
          .deviation = r[first + 1].as<double>(),
          .games = r[first + 2].as<int>(),
          .wins = r[first + 3].as<int>(),
          .draws = r[first + 4].as<int>(),
          .losses = r[first + 5].as<int>()};
}

}  // namespace

absl::StatusOr<PlayerRecord> PostgresStore::CreatePlayer(const std::string& name,
                                                         const std::string& key_hash,
                                                         int64_t now_ms,
                                                         const RegistrationLimit& limit,
                                                         const std::string& skeleton) {
  absl::StatusOr<PlayerRecord> p =
      WithConnection<PlayerRecord>([&](Connection& conn) -> absl::StatusOr<PlayerRecord> {
        pqxx::work tx(conn.c);
        if (limit.max > 0 && !limit.address.empty()) {
          // One registration at a time per address (over every instance): registrations at
          // once cannot all pass the bound.
          tx.exec_prepared("lock_registrations", limit.address);
          const int made =
              tx.exec_prepared1("registrations_since", limit.address, limit.since_ms)[0].as<int>();
          if (made >= limit.max) {
            return absl::ResourceExhaustedError(absl::StrCat(
                made,
                " players were registered from your address in the last hour, the most "
                "one address may: log in with a key you have (ply login NAME --key KEY), "
                "or try again later"));
          }
        }
        // Taken (ignoring case): a unique index says so; the caller learns it as ALREADY_EXISTS.
        if (!tx.exec_prepared("player_by_name", name).empty()) {
          return absl::AlreadyExistsError(absl::StrCat("the name ", name, " is taken"));
        }
        // A look-alike of a player's name (one at a time per skeleton, so that two at once
        // cannot both pass).
        if (!skeleton.empty()) {
          tx.exec_prepared("lock_skeleton", skeleton);
          pqxx::result like = tx.exec_prepared("player_by_skeleton", skeleton);
          if (!like.empty()) {
            return absl::AlreadyExistsError(
                absl::StrCat("the name ", name, " looks like the player ",
                             like[0][0].as<std::string>(), "'s: pick one that reads differently"));
          }
        }
        PlayerRecord created{.id = tx.exec_prepared1("create_player", name, key_hash, now_ms,
                                                     limit.address, skeleton)[0]
                                       .as<int64_t>(),
                             .name = name,
                             .created_ms = now_ms,
                             .last_seen_ms = now_ms};
        tx.commit();
        return created;
      });
  // Two registering the same name at once: the index refused the second.
  if (absl::IsAborted(p.status())) {
    return absl::AlreadyExistsError(absl::StrCat("the name ", name, " is taken"));
  }
  return p;
}

absl::StatusOr<std::string> PostgresStore::PlayerBySkeleton(const std::string& skeleton) {
  return QueryOne<std::string>(
      "player_by_skeleton", [] { return absl::NotFoundError("no player has a name like that"); },
      [](const pqxx::row& r) { return r[0].as<std::string>(); }, skeleton);
}

absl::StatusOr<PlayerRecord> PostgresStore::PlayerByKey(const std::string& key_hash,
                                                        int64_t now_ms) {
  return QueryOne<PlayerRecord>(
      "player_by_key", [] { return absl::NotFoundError("no player has that key"); }, PlayerFromRow,
      key_hash, now_ms);
}

absl::StatusOr<PlayerRecord> PostgresStore::LoadPlayer(const std::string& name) {
  return WithConnection<PlayerRecord>([&](Connection& conn) -> absl::StatusOr<PlayerRecord> {
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn.c);
    pqxx::result r = tx.exec_prepared("player_by_name", name);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("there is no player ", name));
    PlayerRecord p = PlayerFromRow(r[0]);
    for (const pqxx::row& row : tx.exec_prepared("player_ratings", p.id)) {
      GameRatingRecord g = RatingFromRow(row, 1);
      g.game = row[0].as<std::string>();
      p.ratings.push_back(std::move(g));
    }
    tx.commit();
    return p;
  });
}

absl::StatusOr<int64_t> PostgresStore::BotPlayer(const std::string& level) {
  return WithConnection<int64_t>([&](Connection& conn) -> absl::StatusOr<int64_t> {
    pqxx::nontransaction tx(conn.c);
    return tx.exec_prepared1("bot_player", absl::StrCat("bot:", level), pg::NowMs())[0]
        .as<int64_t>();
  });
}

absl::StatusOr<std::vector<MatchRecord>> PostgresStore::PlayerMatches(int64_t player_id,
                                                                      const std::string& game,
                                                                      int64_t before_id,
                                                                      int limit) {
  using Matches = std::vector<MatchRecord>;
  return WithConnection<Matches>([&](Connection& conn) -> absl::StatusOr<Matches> {
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn.c);
    Matches matches;
    const pqxx::result rows =
        game.empty() ? tx.exec_prepared("player_matches", player_id, before_id, limit)
                     : tx.exec_prepared("player_game_matches", player_id, game, before_id, limit);
    for (const pqxx::row& r : rows) matches.push_back(pg::MatchFromRow(r));
    pg::LoadSeats(tx, matches);
    tx.commit();
    return matches;
  });
}

absl::StatusOr<std::vector<LeaderboardRow>> PostgresStore::Leaderboard(const std::string& game,
                                                                       int limit) {
  return QueryAll<LeaderboardRow>(
      "leaderboard",
      [&](const pqxx::row& r) {
        LeaderboardRow row{.name = r[0].as<std::string>(), .bot = r[1].as<bool>()};
        row.rating = RatingFromRow(r, 2);
        row.rating.game = game;
        return row;
      },
      game, Glicko::kProvisional, limit);
}
absl::StatusOr<std::vector<std::pair<std::string, double>>> PostgresStore::BotRatings(
    const std::string& game) {
  return QueryAll<std::pair<std::string, double>>(
      "bot_ratings",
      [](const pqxx::row& r) { return std::make_pair(r[0].as<std::string>(), r[1].as<double>()); },
      game);
}

absl::Status PostgresStore::SeedBotRatings(const std::vector<BotLevelRating>& seeds) {
  return WithConnection([&](Connection& conn) {
    pqxx::work tx(conn.c);
    std::map<std::string, int64_t> players;
    for (const BotLevelRating& seed : seeds) {
      const std::string name = absl::StrCat("bot:", seed.level);
      auto [at, fresh] = players.try_emplace(name, 0);
      if (fresh) at->second = tx.exec_prepared1("bot_player", name, pg::NowMs())[0].as<int64_t>();
      tx.exec_prepared("seed_bot_rating", at->second, seed.game, seed.rating, seed.deviation);
    }
    tx.commit();
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<BotLevelRating>> PostgresStore::BotLevelRatings() {
  return QueryAll<BotLevelRating>("bot_level_ratings", [](const pqxx::row& r) {
    std::string name = r[0].as<std::string>();
    return BotLevelRating{.game = r[1].as<std::string>(),
                          .level = name.substr(name.find(':') + 1),
                          .rating = r[2].as<double>(),
                          .deviation = r[3].as<double>(),
                          .games = r[4].as<int>()};
  });
}

}  // namespace ply::lobby
