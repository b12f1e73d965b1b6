// PostgresStore's matches: creating one (within its creator's quotas), taking its seats,
// finishing it, draw offers, loading and listing matches, and the sweeps of waiting and
// unstarted ones. Moves are in moves.cc.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/registry/registry.h"
#include "lobby-server/rating/glicko2.h"
#include "lobby-server/rating/ratings.h"
#include "lobby-server/storage/postgres/internal.h"

namespace ply::lobby {
namespace {

// ListMatches filters, as bits of a statement's number.
enum ListFilter : int {
  kByGame = 1,
  kByStatus = 2,
  kOpenSeats = 4,
  kBotsOnly = 8,
  kBeforeId = 16,
  kAllListFilters = 32,
};

// Every game whose newcomers do not start at 1500, with where they start, as a JSON object (the
// take_seat statement looks its match's game up in it).
const std::string& NewcomerRatingsJson() {
  static const std::string json = [] {
    nlohmann::json starts = nlohmann::json::object();
    for (const GameInfo& info : ply::ListGames()) {
      if (const double r = NewcomerRating(info.name); r != 1500) starts[info.name] = r;
    }
    return starts.dump();
  }();
  return json;
}

std::string ListStatementName(int filters) { return absl::StrCat("list_matches_", filters); }

// One statement per combination of the filters that are set, so that each one's plan can use
// the index for exactly those filters: a generic "($1 = '' OR game = $1)" cannot, and a
// prepared statement soon settles on a generic plan. Conditions are fixed text and values are
// $n parameters, numbered in the order ListMatches passes them.
std::string ListStatement(int filters) {
  std::vector<std::string> where;
  int n = 0;
  if (filters & kByGame) where.push_back(absl::StrCat("game = $", ++n, "::text"));
  if (filters & kByStatus) where.push_back(absl::StrCat("status = $", ++n, "::smallint"));
  if (filters & kOpenSeats) where.push_back("open_seats > 0");
  if (filters & kBotsOnly) where.push_back("bots_only");
  if (filters & kBeforeId) where.push_back(absl::StrCat("id < $", ++n, "::bigint"));
  return absl::StrCat("SELECT ", pg::kMatchColumns, " FROM matches", where.empty() ? "" : " WHERE ",
                      absl::StrJoin(where, " AND "), " ORDER BY id DESC LIMIT $", ++n, "::integer");
}

// A creator's holdings from a row of "holdings".
Holdings HoldingsFromRow(const pqxx::row& r) {
  return {.waiting = r[0].as<int>(),
          .bot_seats = r[1].as<int>(),
          .bot_matches = r[2].as<int>(),
          .open = r[3].as<int>()};
}

// A match with its seats and moves from a row of "load_match_after".
MatchRecord LoadedMatchFromRow(const pqxx::row& r) {
  MatchRecord match = pg::MatchFromRow(r);
  constexpr int k = pg::kMatchColumnCount;
  for (const nlohmann::json& s : nlohmann::json::parse(r[k].as<std::string>())) {
    SeatRecord seat;
    seat.kind = static_cast<SeatKind>(s[0].get<int>());
    seat.difficulty = s[1].get<std::string>();
    seat.display_name = s[2].get<std::string>();
    seat.token_hash = s[3].get<std::string>();
    seat.clock_ms = s[4].get<int64_t>();
    seat.player_id = s[5].get<int64_t>();
    seat.player = s[6].get<std::string>();
    seat.rating = s[7].get<int>();
    seat.provisional = seat.player_id != 0 && s[8].get<int>() > Glicko::kProvisional;
    seat.rating_after = s[9].get<int>();
    match.seats.push_back(std::move(seat));
  }
  for (const nlohmann::json& m : nlohmann::json::parse(r[k + 1].as<std::string>())) {
    MoveRecord mv;
    mv.ply = m[0].get<int>();
    mv.seat = m[1].get<int>();
    mv.move = m[2].get<std::string>();
    mv.think_ms = m[3].get<int64_t>();
    mv.clock_ms = m[4].get<int64_t>();
    mv.time_ms = m[5].get<int64_t>();
    mv.bot_json = m[6].get<std::string>();
    match.moves.push_back(std::move(mv));
  }
  match.rematch_offer = r[k + 2].as<int>();
  match.rematch_id = r[k + 3].as<int64_t>();
  match.creator = r[k + 4].as<std::string>();
  match.creator_address = r[k + 5].as<std::string>();
  match.creator_network = r[k + 6].as<std::string>();
  return match;
}

}  // namespace

namespace pg {

absl::Status CheckQuota(pqxx::transaction_base& tx, const MatchRecord& m, const QuotaCheck& check) {
  if (!check) return absl::OkStatus();
  // One create at a time per creator and per address (over every instance), so that creates at
  // once cannot all pass a quota that only one of them fits. Locked in one order, so that two
  // creates cannot deadlock.
  std::vector<std::string> keys = {m.creator};
  if (!m.creator_address.empty()) {
    keys.push_back(absl::StrCat("address:", m.creator_address));
  }
  if (!m.creator_network.empty()) {
    keys.push_back(absl::StrCat("network:", m.creator_network));
  }
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) tx.exec_prepared("lock_creator", key);
  const Holdings mine = HoldingsFromRow(tx.exec_prepared1("holdings", m.creator));
  Holdings address =
      m.creator_address.empty()
          ? Holdings()
          : HoldingsFromRow(tx.exec_prepared1("address_holdings", m.creator_address));
  if (!m.creator_network.empty()) {
    address.network_bot_seats =
        tx.exec_prepared1("network_bot_seats", m.creator_network)[0].as<int>();
  }
  return check(mine, address);
}

absl::Status NoMatch(int64_t match_id) {
  return absl::NotFoundError(absl::StrCat("there is no match ", match_id));
}

MatchRecord MatchFromRow(const pqxx::row& r) {
  MatchRecord m;
  m.id = r[0].as<int64_t>();
  m.game = r[1].as<std::string>();
  const nlohmann::json options = nlohmann::json::parse(r[2].as<std::string>());
  for (const auto& [k, v] : options.items()) {
    m.options[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  m.status = static_cast<MatchStatus>(r[3].as<int>());
  m.ply = r[4].as<int>();
  if (int64_t t = r[5].as<int64_t>(); t >= 0) m.time_initial_ms = t;
  m.time_increment_ms = r[6].as<int64_t>();
  m.bot_pacing_ms = r[7].as<int64_t>();
  m.turn_started_ms = r[8].as<int64_t>();
  m.draw_offer = r[9].as<int>();
  m.result.winner = r[10].as<int>();
  m.result.reason = static_cast<EndReason>(r[11].as<int>());
  m.result.text = r[12].as<std::string>();
  m.created_ms = r[13].as<int64_t>();
  m.rated = r[14].as<bool>();
  m.result.rating_note = r[15].as<std::string>();
  return m;
}

// Attaches the seats of `matches` with one query.
void LoadSeats(pqxx::transaction_base& tx, std::vector<MatchRecord>& matches) {
  if (matches.empty()) return;
  std::vector<std::string> ids;
  for (const MatchRecord& m : matches) ids.push_back(absl::StrCat(m.id));
  pqxx::result rows =
      tx.exec_prepared("load_seats", absl::StrCat("{", absl::StrJoin(ids, ","), "}"));
  for (const pqxx::row& r : rows) {
    int64_t id = r[0].as<int64_t>();
    for (MatchRecord& m : matches) {
      if (m.id != id) continue;
      SeatRecord s;
      s.kind = static_cast<SeatKind>(r[2].as<int>());
      s.difficulty = r[3].as<std::string>();
      s.display_name = r[4].as<std::string>();
      s.token_hash = r[5].as<std::string>();
      s.clock_ms = r[6].as<int64_t>();
      s.player = r[7].as<std::string>();
      s.rating = r[8].as<int>();
      s.rating_after = r[9].as<int>();
      s.player_id = r[10].as<int64_t>();
      // As LoadedMatchFromRow reads it: the lists showed every rating as settled.
      s.provisional = s.player_id != 0 && r[11].as<int>() > Glicko::kProvisional;
      m.seats.push_back(std::move(s));
    }
  }
}

// Writes a new match and its seats in `tx`; returns its id.
int64_t InsertMatch(pqxx::transaction_base& tx, const MatchRecord& m) {
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [k, v] : m.options) options[k] = v;
  int open = 0;
  int bot_seats = 0;
  bool bots_only = true;
  for (const SeatRecord& s : m.seats) {
    if (!s.taken()) ++open;
    if (s.kind != SeatKind::kBot) bots_only = false;
    if (s.kind == SeatKind::kBot) ++bot_seats;
  }
  nlohmann::json seats = nlohmann::json::array();
  for (size_t i = 0; i < m.seats.size(); ++i) {
    const SeatRecord& s = m.seats[i];
    seats.push_back({{"seat", i},
                     {"kind", static_cast<int>(s.kind)},
                     {"difficulty", s.difficulty},
                     {"name", s.display_name},
                     {"hash", s.token_hash},
                     {"clock", s.clock_ms},
                     {"player", s.player_id}});
  }
  return tx
      .exec_prepared1("create_match", m.game, Dump(options), static_cast<int>(m.status),
                      m.time_initial_ms.value_or(-1), m.time_increment_ms, m.bot_pacing_ms,
                      m.turn_started_ms, open, bots_only, m.created_ms, Dump(seats), m.creator,
                      bot_seats, m.rated, m.creator_address, m.creator_network,
                      NewcomerRating(m.game))[0]
      .as<int64_t>();
}
// The statements of matches and seats, and of quotas and sweeps.
const StatementList& MatchStatements() {
  static const StatementList statements = {
      // A new match and its seats in one statement (one round trip, atomic on its own); the
      // seats come as a JSON array. A seat keeps its player's rating rounded as numeric,
      // half away from zero as std::lround rounds the ratings shown elsewhere (round() on a
      // double rounds a half to even: 1716.5 to 1716 beside a profile's 1717).
      {"create_match",
       "WITH m AS ("
       "  INSERT INTO matches (game, options, status, time_initial_ms, time_increment_ms,"
       "    bot_pacing_ms, turn_started_ms, open_seats, bots_only, created_ms, creator,"
       "    bot_seats, rated, creator_address, creator_network)"
       "  VALUES ($1, $2::jsonb, $3, NULLIF($4::bigint, -1), $5, $6, $7, $8, $9, $10, $12,"
       "    $13, $14, $15, $16)"
       "  RETURNING id),"
       " s AS ("
       "  INSERT INTO seats (match_id, seat, kind, difficulty, display_name, token_hash, clock_ms,"
       "    player_id, rating_before, deviation_before)"
       "  SELECT m.id, x.seat, x.kind, x.difficulty, x.name, NULLIF(x.hash, ''), x.clock,"
       "    NULLIF(x.player, 0),"
       "    COALESCE(round(r.rating::numeric),"
       "      CASE WHEN x.player > 0 THEN round($17::numeric) ELSE 0 END),"
       "    COALESCE(round(r.deviation::numeric), CASE WHEN x.player > 0 THEN 350 ELSE 0 END)"
       "  FROM m, jsonb_to_recordset($11::jsonb)"
       "    AS x(seat integer, kind integer, difficulty text, name text, hash text, clock bigint,"
       "    player bigint)"
       "  LEFT JOIN ratings r ON r.player_id = x.player AND r.game = $1)"
       " SELECT id FROM m"},
      // A person takes an open seat of a waiting match, and the match starts when that was the
      // last open seat: one statement. The seat row's lock settles a race for the same seat;
      // the match row's lock orders joins of different seats, so exactly the last one starts
      // it. Returns (seat taken?, the match's status after, or before when not taken; NULL
      // when there is no such match).
      {"take_seat",
       // The match row is locked first and still waiting once the lock is had (a match
       // cancelled meanwhile, by the expiry, takes no seat).
       "WITH waiting AS (SELECT id FROM matches WHERE id = $1 AND status = 1 FOR UPDATE),"
       // A seat the player holds already, in a rated match: none may be taken (ratings.h).
       " mine AS (SELECT s.seat FROM seats s JOIN matches m ON m.id = s.match_id"
       "  WHERE s.match_id = $1 AND m.rated AND $6 > 0 AND s.player_id = $6),"
       " taken AS ("
       "  UPDATE seats SET display_name = $3, token_hash = $4, player_id = NULLIF($6::bigint, 0),"
       // A newcomer's rating is the game's start ($7: NewcomerRating of each game that has
       // one other than 1500, as JSON).
       "    rating_before = CASE WHEN $6 > 0 THEN COALESCE(round(r.rating::numeric),"
       "      round(COALESCE(($7::jsonb ->> (SELECT game FROM matches WHERE id = $1))::numeric,"
       "      1500))) ELSE 0 END,"
       "    deviation_before = CASE WHEN $6 > 0 THEN COALESCE(round(r.deviation::numeric), 350)"
       "      ELSE 0 END"
       // The player's rating row in the match's game, read once (none for a newcomer).
       "  FROM (VALUES (1)) one LEFT JOIN ratings r ON r.player_id = $6"
       "    AND r.game = (SELECT game FROM matches WHERE id = $1)"
       "  WHERE match_id = $1 AND seat = $2 AND kind = 1 AND token_hash IS NULL"
       "  AND EXISTS (SELECT 1 FROM waiting) AND NOT EXISTS (SELECT 1 FROM mine)"
       "  RETURNING rating_before, deviation_before),"
       " filled AS ("
       "  UPDATE matches SET open_seats = open_seats - 1,"
       "    status = CASE WHEN open_seats = 1 THEN 2 ELSE status END,"
       "    turn_started_ms = CASE WHEN open_seats = 1 THEN $5 ELSE turn_started_ms END,"
       "    rated = rated AND $6 > 0"
       "  WHERE id = $1 AND status = 1 AND EXISTS (SELECT 1 FROM taken) RETURNING status)"
       " SELECT (SELECT count(*) FROM taken),"
       "  COALESCE((SELECT status FROM filled), (SELECT status FROM matches WHERE id = $1)),"
       "  (SELECT min(seat) FROM mine), (SELECT rating_before FROM taken),"
       "  (SELECT deviation_before FROM taken)"},
      {"set_clock", "UPDATE seats SET clock_ms = $3 WHERE match_id = $1 AND seat = $2"},
      {"finish_match",
       "UPDATE matches SET status = 3, winner = $3, end_reason = $4, result_text = $5, "
       "draw_offer = -1 WHERE id = $1 AND status = 2 AND ply = $2"},
      {"set_draw_offer",
       "UPDATE matches SET draw_offer = $3 WHERE id = $1 AND status = 2 AND ply = $2"},
      {"load_seats",
       "SELECT s.match_id, s.seat, s.kind, s.difficulty, s.display_name,"
       " COALESCE(s.token_hash, ''), s.clock_ms, COALESCE(p.name, ''), s.rating_before,"
       " s.rating_after, COALESCE(s.player_id, 0), s.deviation_before"
       " FROM seats s LEFT JOIN players p ON p.id = s.player_id"
       " WHERE s.match_id = ANY($1::bigint[]) ORDER BY s.match_id, s.seat"},
      // A match with its seats and the moves after $2, in one statement (one snapshot, one
      // round trip).
      {"load_match_after",
       absl::StrCat(
           "SELECT ", kMatchColumns,
           ", (SELECT COALESCE(json_agg(json_build_array(s.kind, s.difficulty, s.display_name,"
           "   COALESCE(s.token_hash, ''), s.clock_ms, COALESCE(s.player_id, 0),"
           "   COALESCE(p.name, ''), s.rating_before, s.deviation_before, s.rating_after)"
           "   ORDER BY s.seat), '[]') FROM seats s LEFT JOIN players p ON p.id = s.player_id"
           "   WHERE s.match_id = $1)::text,"
           " (SELECT COALESCE(json_agg(json_build_array(ply, seat, move, think_ms, clock_ms,"
           "   time_ms, COALESCE(bot::text, '')) ORDER BY ply), '[]') FROM moves"
           "   WHERE match_id = $1 AND ply > $2)::text,"
           " rematch_offer, COALESCE(rematch_id, 0), creator, creator_address, creator_network"
           " FROM matches WHERE id = $1")},
      {"to_resume",
       "SELECT id FROM matches WHERE status = 2 AND (time_initial_ms IS NOT NULL OR EXISTS "
       "(SELECT 1 FROM seats WHERE seats.match_id = matches.id AND seats.kind = 2)) ORDER BY id"},
      {"find_token", "SELECT match_id, seat FROM seats WHERE token_hash = $1"},
      {"load_version",
       "SELECT ply, status, draw_offer, open_seats, rematch_offer, COALESCE(rematch_id, 0)"
       " FROM matches WHERE id = $1"},
      {"holdings",
       "SELECT count(*) FILTER (WHERE status = 1), COALESCE(sum(bot_seats), 0),"
       " count(*) FILTER (WHERE bots_only), count(*) FROM matches WHERE creator = $1"
       " AND status IN (1, 2)"},
      {"address_holdings",
       "SELECT count(*) FILTER (WHERE status = 1), COALESCE(sum(bot_seats), 0),"
       " count(*) FILTER (WHERE bots_only), count(*) FROM matches WHERE creator_address = $1"
       " AND status IN (1, 2)"},
      {"network_bot_seats",
       "SELECT COALESCE(sum(bot_seats), 0) FROM matches WHERE creator_network = $1"
       " AND status IN (1, 2)"},
      {"lock_creator", "SELECT pg_advisory_xact_lock(7140002, hashtext($1))"},
      {"bot_seats_in_play",
       "SELECT COALESCE(sum(bot_seats), 0) FROM matches WHERE status IN (1, 2)"
       " AND bot_seats > 0"},
      // The oldest waiting matches past their time; a row another transaction holds (a seat
      // being taken) is left for the next sweep.
      {"expire_waiting",
       "WITH old AS (SELECT id FROM matches WHERE status = 1 AND created_ms < $1"
       "  ORDER BY created_ms LIMIT $3 FOR UPDATE SKIP LOCKED)"
       " UPDATE matches m SET status = 3, winner = -1, end_reason = 6, result_text = $2,"
       " open_seats = 0"
       " FROM old WHERE m.id = old.id RETURNING m.id"},
      // Active matches whose side to move is a person that has not made its first move in a turn
      // that began before $1. The row is locked and checked again (a move landing meanwhile
      // starts a new turn, so the match is left alone); one another transaction holds is left
      // for the next sweep. No index: the condition reads `ply`, which every move writes, and an
      // index on it would cost moves their in-place (HOT) updates; active matches are few.
      // In a match between people, the seat that did not move is marked as a no-show ($4):
      // its player waits before pairing again (players/matchmaker.h).
      {"abort_unstarted",
       "WITH old AS (SELECT m.id FROM matches m WHERE m.status = 2 AND m.ply < 2"
       "  AND m.turn_started_ms < $1 AND EXISTS (SELECT 1 FROM seats s WHERE s.match_id = m.id"
       "  AND s.seat = m.ply AND s.kind = 1) ORDER BY m.id LIMIT $3 FOR UPDATE SKIP LOCKED),"
       " done AS (UPDATE matches m SET status = 3, winner = -1, end_reason = 7,"
       "  result_text = $2, draw_offer = -1"
       "  FROM old WHERE m.id = old.id AND m.status = 2 AND m.ply < 2 AND m.turn_started_ms < $1"
       "  RETURNING m.id, m.ply),"
       " marked AS (UPDATE seats s SET no_show_ms = $4 FROM done WHERE s.match_id = done.id"
       "  AND s.seat = done.ply AND s.kind = 1 AND s.player_id IS NOT NULL"
       "  AND NOT EXISTS (SELECT 1 FROM seats o WHERE o.match_id = done.id"
       "  AND (o.kind <> 1 OR (o.seat <> s.seat AND o.player_id = s.player_id))))"
       " SELECT id, ply FROM done"},
      {"statement_timeout", "SELECT set_config('statement_timeout', $1, false)"},
      // For the rest of a transaction: plan each statement for its values. A generic plan
      // (what PostgreSQL settles on after five calls) picks one index for every value, and a
      // list filtered by a status that no open match has then reads every open match.
      {"custom_plans", "SELECT set_config('plan_cache_mode', 'force_custom_plan', true)"},
  };
  return statements;
}

const StatementList& ListStatements() {
  static const StatementList statements = [] {
    StatementList list;
    for (int filters = 0; filters < kAllListFilters; ++filters) {
      list.emplace_back(ListStatementName(filters), ListStatement(filters));
    }
    return list;
  }();
  return statements;
}

}  // namespace pg

absl::StatusOr<int64_t> PostgresStore::CreateMatch(const MatchRecord& m) {
  return CreateMatchWithin(m, nullptr);
}

absl::StatusOr<int64_t> PostgresStore::CreateMatchWithin(const MatchRecord& m,
                                                         const QuotaCheck& check) {
  return WithConnection<int64_t>([&](Connection& conn) -> absl::StatusOr<int64_t> {
    pqxx::work tx(conn.c);
    if (absl::Status s = pg::CheckQuota(tx, m, check); !s.ok()) return s;
    const int64_t id = pg::InsertMatch(tx, m);
    tx.commit();
    return id;
  });
}

absl::StatusOr<bool> PostgresStore::TakeSeat(int64_t match_id, int seat, const std::string& name,
                                             const std::string& token_hash, int64_t now_ms,
                                             int64_t player_id, SeatRecord* taken) {
  absl::StatusOr<bool> started =
      WithConnection<bool>([&](Connection& conn) -> absl::StatusOr<bool> {
        pqxx::nontransaction tx(conn.c);
        pqxx::row r = tx.exec_prepared1("take_seat", match_id, seat, name, token_hash, now_ms,
                                        player_id, NewcomerRatingsJson());
        if (r[1].is_null()) return pg::NoMatch(match_id);
        // Not taken: the match is over (cancelled, say), or someone holds that seat (a match
        // starts only once every seat is held).
        if (r[0].as<int>() == 0 && r[1].as<int>() == static_cast<int>(MatchStatus::kFinished)) {
          return absl::FailedPreconditionError(
              absl::StrCat("match ", match_id, " is over: nobody can join it"));
        }
        if (r[0].as<int>() == 0 && !r[2].is_null()) {
          return absl::FailedPreconditionError(
              absl::StrCat("you already hold seat ", r[2].as<int>() + 1, " of match ", match_id,
                           ", a rated match: one player cannot hold both seats of a rated match"));
        }
        if (r[0].as<int>() == 0) {
          return absl::AlreadyExistsError(
              absl::StrCat("seat ", seat + 1, " of match ", match_id, " is already taken"));
        }
        if (taken != nullptr) {
          taken->rating = r[3].as<int>();
          taken->provisional = player_id != 0 && r[4].as<int>() > Glicko::kProvisional;
        }
        return r[1].as<int>() == static_cast<int>(MatchStatus::kActive);
      });
  if (started.ok()) Announce({{.match_id = match_id, .ply = 0, .time_ms = pg::NowMs()}});
  return started;
}

absl::Status PostgresStore::Finish(int64_t match_id, const FinishCommit& commit) {
  absl::Status s = WithConnection([&](Connection& conn) {
    pqxx::connection& c = conn.c;
    pqxx::work tx(c);
    pqxx::result done =
        tx.exec_prepared("finish_match", match_id, commit.expected_ply, commit.result.winner,
                         static_cast<int>(commit.result.reason), commit.result.text);
    if (done.affected_rows() == 0) {
      return MatchMovedOn(match_id, commit.expected_ply);
    }
    for (size_t i = 0; i < commit.clocks_ms.size(); ++i) {
      tx.exec_prepared("set_clock", match_id, static_cast<int>(i), commit.clocks_ms[i]);
    }
    pg::RateMatch(tx, match_id, commit.result, commit.expected_ply);
    tx.commit();
    return absl::OkStatus();
  });
  if (s.ok())
    Announce({{.match_id = match_id, .ply = commit.expected_ply, .time_ms = pg::NowMs()}});
  return s;
}

absl::Status PostgresStore::SetDrawOffer(int64_t match_id, int expected_ply, int seat) {
  absl::Status s = WithConnection([&](Connection& conn) {
    pqxx::connection& c = conn.c;
    pqxx::work tx(c);
    pqxx::result r = tx.exec_prepared("set_draw_offer", match_id, expected_ply, seat);
    if (r.affected_rows() == 0) {
      return MatchMovedOn(match_id, expected_ply);
    }
    tx.commit();
    return absl::OkStatus();
  });
  if (s.ok()) Announce({{.match_id = match_id, .ply = expected_ply, .time_ms = pg::NowMs()}});
  return s;
}

absl::StatusOr<MatchRecord> PostgresStore::LoadMatch(int64_t match_id) {
  return LoadMatchAfter(match_id, 0);
}

absl::StatusOr<MatchRecord> PostgresStore::LoadMatchAfter(int64_t match_id, int after_ply) {
  return QueryOne<MatchRecord>(
      "load_match_after", [match_id] { return pg::NoMatch(match_id); }, LoadedMatchFromRow,
      match_id, after_ply);
}

absl::StatusOr<std::vector<MatchRecord>> PostgresStore::ListMatches(const MatchFilter& f) {
  using Matches = std::vector<MatchRecord>;
  return WithConnection<Matches>([&](Connection& conn) -> absl::StatusOr<Matches> {
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn.c);
    tx.exec_prepared("custom_plans");
    int filters = 0;
    std::vector<std::string> params;
    if (!f.game.empty()) {
      filters |= kByGame;
      params.push_back(f.game);
    }
    if (f.status) {
      filters |= kByStatus;
      params.push_back(absl::StrCat(static_cast<int>(*f.status)));
    }
    if (f.open_seats) filters |= kOpenSeats;
    if (f.bots_only) filters |= kBotsOnly;
    if (f.before_id != 0) {
      filters |= kBeforeId;
      params.push_back(absl::StrCat(f.before_id));
    }
    params.push_back(absl::StrCat(f.limit));
    Matches matches;
    for (const pqxx::row& r :
         tx.exec_prepared(ListStatementName(filters), pqxx::prepare::make_dynamic_params(params))) {
      matches.push_back(pg::MatchFromRow(r));
    }
    pg::LoadSeats(tx, matches);
    tx.commit();
    return matches;
  });
}

absl::StatusOr<std::vector<int64_t>> PostgresStore::MatchesToResume() {
  return QueryAll<int64_t>("to_resume", pg::IdFromRow);
}

absl::StatusOr<std::optional<std::pair<int64_t, int>>> PostgresStore::FindToken(
    const std::string& token_hash) {
  return QueryFirst<std::pair<int64_t, int>>(
      "find_token",
      [](const pqxx::row& r) { return std::make_pair(r[0].as<int64_t>(), r[1].as<int>()); },
      token_hash);
}

absl::StatusOr<MatchVersion> PostgresStore::LoadVersion(int64_t match_id) {
  return QueryOne<MatchVersion>(
      "load_version", [match_id] { return pg::NoMatch(match_id); },
      [](const pqxx::row& r) {
        MatchVersion v;
        v.ply = r[0].as<int>();
        v.status = static_cast<MatchStatus>(r[1].as<int>());
        v.draw_offer = r[2].as<int>();
        v.open_seats = r[3].as<int>();
        v.rematch_offer = r[4].as<int>();
        v.rematch_id = r[5].as<int64_t>();
        return v;
      },
      match_id);
}

absl::StatusOr<Holdings> PostgresStore::HoldingsOf(const std::string& creator) {
  return WithConnection<Holdings>([&](Connection& conn) -> absl::StatusOr<Holdings> {
    pqxx::nontransaction tx(conn.c);
    return HoldingsFromRow(tx.exec_prepared1("holdings", creator));
  });
}

absl::StatusOr<int> PostgresStore::BotSeatsInPlay() {
  return WithConnection<int>([](Connection& conn) -> absl::StatusOr<int> {
    pqxx::nontransaction tx(conn.c);
    return tx.exec_prepared1("bot_seats_in_play")[0].as<int>();
  });
}

absl::StatusOr<std::vector<int64_t>> PostgresStore::ExpireWaiting(int64_t created_before_ms,
                                                                  const std::string& text,
                                                                  int limit) {
  absl::StatusOr<std::vector<int64_t>> ids =
      QueryAll<int64_t>("expire_waiting", pg::IdFromRow, created_before_ms, text, limit);
  if (!ids.ok()) return ids;
  std::vector<MatchChange> changes;
  for (int64_t id : *ids) changes.push_back({.match_id = id, .ply = 0, .time_ms = pg::NowMs()});
  if (!changes.empty()) Announce(changes);
  return ids;
}

absl::StatusOr<std::vector<int64_t>> PostgresStore::AbortUnstarted(int64_t turn_started_before_ms,
                                                                   int64_t now_ms,
                                                                   const std::string& text,
                                                                   int limit) {
  absl::StatusOr<std::vector<MatchChange>> changes = QueryAll<MatchChange>(
      "abort_unstarted",
      [](const pqxx::row& r) {
        return MatchChange{
            .match_id = r[0].as<int64_t>(), .ply = r[1].as<int>(), .time_ms = pg::NowMs()};
      },
      turn_started_before_ms, text, limit, now_ms);
  if (!changes.ok()) return changes.status();
  std::vector<int64_t> ids;
  for (const MatchChange& c : *changes) ids.push_back(c.match_id);
  if (!changes->empty()) Announce(*changes);
  return ids;
}

}  // namespace ply::lobby
