#include "lobby-server/storage/postgres/postgres_store.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "lobby-server/players/glicko2.h"
#include "lobby-server/storage/postgres/internal.h"
#include "lobby-server/storage/postgres/migrations.h"

namespace ply::lobby {
namespace pg {

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

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
                      bot_seats, m.rated)[0]
      .as<int64_t>();
}

// The statements of matches, seats and moves, and of quotas and sweeps.
const StatementList& MatchStatements() {
  static const StatementList statements = {
      // A new match and its seats in one statement (one round trip, atomic on its own); the
      // seats come as a JSON array.
      {"create_match",
       "WITH m AS ("
       "  INSERT INTO matches (game, options, status, time_initial_ms, time_increment_ms,"
       "    bot_pacing_ms, turn_started_ms, open_seats, bots_only, created_ms, creator,"
       "    bot_seats, rated)"
       "  VALUES ($1, $2::jsonb, $3, NULLIF($4::bigint, -1), $5, $6, $7, $8, $9, $10, $12,"
       "    $13, $14)"
       "  RETURNING id),"
       " s AS ("
       "  INSERT INTO seats (match_id, seat, kind, difficulty, display_name, token_hash, clock_ms,"
       "    player_id, rating_before, deviation_before)"
       "  SELECT m.id, x.seat, x.kind, x.difficulty, x.name, NULLIF(x.hash, ''), x.clock,"
       "    NULLIF(x.player, 0), COALESCE(round(r.rating), CASE WHEN x.player > 0 THEN 1500"
       "    ELSE 0 END), COALESCE(round(r.deviation), CASE WHEN x.player > 0 THEN 350 ELSE 0 END)"
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
       " taken AS ("
       "  UPDATE seats SET display_name = $3, token_hash = $4, player_id = NULLIF($6::bigint, 0),"
       "    rating_before = CASE WHEN $6 > 0 THEN COALESCE((SELECT round(rating) FROM ratings r,"
       "      matches m WHERE m.id = $1 AND r.player_id = $6 AND r.game = m.game), 1500)"
       "      ELSE 0 END,"
       "    deviation_before = CASE WHEN $6 > 0 THEN COALESCE((SELECT round(deviation) FROM"
       "      ratings r, matches m WHERE m.id = $1 AND r.player_id = $6 AND r.game = m.game), 350)"
       "      ELSE 0 END"
       "  WHERE match_id = $1 AND seat = $2 AND kind = 1 AND token_hash IS NULL"
       "  AND EXISTS (SELECT 1 FROM waiting) RETURNING 1),"
       " filled AS ("
       "  UPDATE matches SET open_seats = open_seats - 1,"
       "    status = CASE WHEN open_seats = 1 THEN 2 ELSE status END,"
       "    turn_started_ms = CASE WHEN open_seats = 1 THEN $5 ELSE turn_started_ms END,"
       "    rated = rated AND $6 > 0"
       "  WHERE id = $1 AND status = 1 AND EXISTS (SELECT 1 FROM taken) RETURNING status)"
       " SELECT (SELECT count(*) FROM taken),"
       "  COALESCE((SELECT status FROM filled), (SELECT status FROM matches WHERE id = $1))"},
      // A move in one statement (one round trip, atomic on its own): the match advances only
      // if it is still active at the previous ply, and the move row and the mover's clock are
      // written only if it did.
      {"append_move",
       "WITH advanced AS ("
       "  UPDATE matches SET ply = $2, turn_started_ms = $3, draw_offer = $4, status = $5,"
       "    winner = $6, end_reason = $7, result_text = $8"
       "  WHERE id = $1 AND status = 2 AND ply = $2 - 1 RETURNING id),"
       " inserted AS ("
       "  INSERT INTO moves (match_id, ply, seat, move, think_ms, clock_ms, time_ms, bot)"
       "  SELECT id, $2, $9, $10, $11, $12, $13, NULLIF($14, '')::jsonb FROM advanced"
       "  RETURNING 1),"
       " clocked AS ("
       "  UPDATE seats SET clock_ms = $15 WHERE $16 AND match_id = $1 AND seat = $9"
       "  AND EXISTS (SELECT 1 FROM advanced) RETURNING 1)"
       " SELECT (SELECT count(*) FROM advanced), (SELECT count(*) FROM inserted),"
       "  (SELECT count(*) FROM clocked)"},
      // append_move for many matches at once, from a JSON array of moves; returns the ids of
      // the matches that advanced (the others were no longer active at the previous ply).
      {"append_moves",
       "WITH batch AS ("
       "  SELECT * FROM jsonb_to_recordset($1::jsonb) AS b(m bigint, p integer, ts bigint,"
       "    d integer, st integer, w integer, r integer, rt text, s integer, mv text, th bigint,"
       "    cl bigint, t bigint, bot text, mc bigint, c boolean)),"
       " advanced AS ("
       "  UPDATE matches SET ply = b.p, turn_started_ms = b.ts, draw_offer = b.d, status = b.st,"
       "    winner = b.w, end_reason = b.r, result_text = b.rt"
       "  FROM batch b WHERE matches.id = b.m AND matches.status = 2 AND matches.ply = b.p - 1"
       "  RETURNING matches.id),"
       " inserted AS ("
       "  INSERT INTO moves (match_id, ply, seat, move, think_ms, clock_ms, time_ms, bot)"
       "  SELECT b.m, b.p, b.s, b.mv, b.th, b.cl, b.t, NULLIF(b.bot, '')::jsonb"
       "  FROM batch b JOIN advanced a ON a.id = b.m),"
       " clocked AS ("
       "  UPDATE seats SET clock_ms = b.mc FROM batch b JOIN advanced a ON a.id = b.m"
       "  WHERE b.c AND seats.match_id = b.m AND seats.seat = b.s)"
       " SELECT id FROM advanced"},
      {"set_clock", "UPDATE seats SET clock_ms = $3 WHERE match_id = $1 AND seat = $2"},
      {"finish_match",
       "UPDATE matches SET status = 3, winner = $3, end_reason = $4, result_text = $5, "
       "draw_offer = -1 WHERE id = $1 AND status = 2 AND ply = $2"},
      {"set_draw_offer",
       "UPDATE matches SET draw_offer = $3 WHERE id = $1 AND status = 2 AND ply = $2"},
      {"load_seats",
       "SELECT s.match_id, s.seat, s.kind, s.difficulty, s.display_name,"
       " COALESCE(s.token_hash, ''), s.clock_ms, COALESCE(p.name, ''), s.rating_before,"
       " s.rating_after FROM seats s LEFT JOIN players p ON p.id = s.player_id"
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
           " rematch_offer, COALESCE(rematch_id, 0)"
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
       " count(*) FILTER (WHERE bots_only) FROM matches WHERE creator = $1 AND status IN (1, 2)"},
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
      {"abort_unstarted",
       "WITH old AS (SELECT m.id FROM matches m WHERE m.status = 2 AND m.ply < 2"
       "  AND m.turn_started_ms < $1 AND EXISTS (SELECT 1 FROM seats s WHERE s.match_id = m.id"
       "  AND s.seat = m.ply AND s.kind = 1) ORDER BY m.id LIMIT $3 FOR UPDATE SKIP LOCKED)"
       " UPDATE matches m SET status = 3, winner = -1, end_reason = 7, result_text = $2,"
       " draw_offer = -1"
       " FROM old WHERE m.id = old.id AND m.status = 2 AND m.ply < 2 AND m.turn_started_ms < $1"
       " RETURNING m.id, m.ply"},
      {"statement_timeout", "SELECT set_config('statement_timeout', $1, false)"},
      // For the rest of a transaction: plan each statement for its values. A generic plan
      // (what PostgreSQL settles on after five calls) picks one index for every value, and a
      // list filtered by a status that no open match has then reads every open match.
      {"custom_plans", "SELECT set_config('plan_cache_mode', 'force_custom_plan', true)"},
  };
  return statements;
}

}  // namespace pg

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

std::string NewOrigin() {
  std::random_device rd;
  const uint64_t bits = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return absl::StrCat(absl::Hex(bits, absl::kZeroPad16));
}

// Database error text (server messages, statement details, host names) is for operators, not
// for the lobby's callers: it is logged here, once, and the status carries a fixed sentence.
absl::Status Failure(absl::Status answer, const std::string& detail) {
  std::string line = absl::StrCat("ply-lobby: database: ", answer.message(), " (",
                                  absl::CHexEscape(detail), ")\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
  return answer;
}
absl::Status DatabaseUnavailable() {
  return absl::UnavailableError("the database is unavailable; try again later");
}
absl::Status DatabaseRefused() {
  return absl::InternalError("the database refused the request; the lobby logged why");
}

// A match with its seats and moves from a row of "load_match_after".
MatchRecord LoadedMatchFromRow(const pqxx::row& r) {
  MatchRecord match = pg::MatchFromRow(r);
  for (const nlohmann::json& s : nlohmann::json::parse(r[15].as<std::string>())) {
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
  for (const nlohmann::json& m : nlohmann::json::parse(r[16].as<std::string>())) {
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
  match.rematch_offer = r[17].as<int>();
  match.rematch_id = r[18].as<int64_t>();
  return match;
}

}  // namespace

// A connection borrowed from the pool; it goes back on destruction unless it broke.
class PostgresStore::Lease {
 public:
  Lease(PostgresStore* store, std::unique_ptr<Connection> c) : store_(store), c_(std::move(c)) {}
  ~Lease() {
    std::lock_guard<std::mutex> lock(store_->mu_);
    if (c_ != nullptr && !broken_ && c_->c.is_open()) {
      store_->idle_.push_back(std::move(c_));
    } else {
      --store_->open_;
    }
    store_->released_.notify_one();
  }
  pqxx::connection& connection() { return c_->c; }
  Connection& wrapper() { return *c_; }
  void MarkBroken() { broken_ = true; }

 private:
  PostgresStore* store_;
  std::unique_ptr<Connection> c_;
  bool broken_ = false;
};

PostgresStore::PostgresStore(PostgresOptions options)
    : options_(std::move(options)), origin_(NewOrigin()) {
  // Bound connection attempts and notice a dead server between calls.
  const std::string extra = absl::StrCat("connect_timeout=", options_.connect_timeout_s,
                                         " keepalives_idle=10 keepalives_interval=5");
  if (options_.url.find("://") != std::string::npos) {
    std::string query = extra;
    std::replace(query.begin(), query.end(), ' ', '&');
    conninfo_ =
        absl::StrCat(options_.url, options_.url.find('?') == std::string::npos ? "?" : "&", query);
  } else {
    conninfo_ = absl::StrCat(options_.url, " ", extra);
  }
  // The writers' connections come on top of the calls' pool, so neither starves the other.
  max_open_ = options_.pool_size + std::max(1, options_.append_writers);
  for (int i = 0; i < std::max(1, options_.append_writers); ++i) {
    writers_.emplace_back([this] { WriteAppends(); });
  }
}

PostgresStore::~PostgresStore() {
  listening_ = false;
  if (listener_.joinable()) listener_.join();
  {
    std::lock_guard<std::mutex> lock(append_mu_);
    closing_ = true;
  }
  append_ready_.notify_all();
  for (std::thread& t : writers_) t.join();
}

int PostgresStore::SchemaVersion() { return static_cast<int>(pg::Migrations().size()); }

std::unique_ptr<PostgresStore::Connection> PostgresStore::Connect(
    const std::string& application_name) {
  std::string conninfo = conninfo_;
  if (!application_name.empty()) {
    conninfo += absl::StrCat(options_.url.find("://") != std::string::npos ? "&" : " ",
                             "application_name=", application_name);
  }
  auto conn = std::make_unique<Connection>(conninfo);
  for (const pg::StatementList* statements :
       {&pg::MatchStatements(), &pg::PlayerStatements(), &pg::QueueStatements(),
        &pg::PresenceStatements(), &pg::RematchStatements(), &pg::AnalysisStatements(),
        &pg::PeerStatements()}) {
    for (const auto& [name, sql] : *statements) conn->c.prepare(name, sql);
  }
  for (int filters = 0; filters < kAllListFilters; ++filters) {
    conn->c.prepare(ListStatementName(filters), ListStatement(filters));
  }
  pqxx::nontransaction n(conn->c);
  n.exec_prepared("statement_timeout", absl::StrCat(options_.statement_timeout_ms));
  return conn;
}

absl::Status PostgresStore::WithConnection(const std::function<absl::Status(Connection&)>& work) {
  std::unique_ptr<Connection> c;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const bool got = released_.wait_for(lock, absl::ToChronoNanoseconds(options_.acquire_timeout),
                                        [this] { return !idle_.empty() || open_ < max_open_; });
    if (!got) return absl::UnavailableError("every database connection is busy");
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++open_;
    }
  }
  if (c == nullptr) {
    try {
      c = Connect();
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu_);
      --open_;
      released_.notify_one();
      return Failure(absl::UnavailableError("the database cannot be reached; try again later"),
                     e.what());
    }
  }
  Lease lease(this, std::move(c));
  try {
    return work(lease.wrapper());
  } catch (const pqxx::broken_connection& e) {
    lease.MarkBroken();
    return Failure(absl::UnavailableError("the database connection broke; try again"), e.what());
  } catch (const pqxx::in_doubt_error& e) {
    lease.MarkBroken();
    return Failure(absl::UnavailableError("the database connection broke during a commit; "
                                          "reload before trusting what was written"),
                   e.what());
  } catch (const pqxx::unique_violation& e) {
    return Failure(absl::AbortedError("a concurrent write got there first; reload and retry"),
                   e.what());
  } catch (const pqxx::sql_error& e) {
    // Class 08 (connection exception) and 57 (operator intervention: shutdown, cancelled by
    // the statement timeout) mean the database is going away or too slow, not a bug here.
    const std::string& state = e.sqlstate();
    if (state.rfind("08", 0) == 0 || state.rfind("57", 0) == 0 || !lease.connection().is_open()) {
      lease.MarkBroken();
      return Failure(DatabaseUnavailable(), absl::StrCat("SQLSTATE ", state, ": ", e.what()));
    }
    return Failure(DatabaseRefused(), absl::StrCat("SQLSTATE ", state, ": ", e.what()));
  } catch (const std::exception& e) {
    if (!lease.connection().is_open()) {
      lease.MarkBroken();
      return Failure(DatabaseUnavailable(), e.what());
    }
    return Failure(DatabaseRefused(), e.what());
  }
}

absl::Status PostgresStore::Migrate() {
  return WithConnection([](Connection& conn) {
    pqxx::connection& c = conn.c;
    pqxx::work tx(c);
    // Several lobbies may start at once: one migrates, the others wait and find it done.
    tx.exec("SELECT pg_advisory_xact_lock(7140001)");
    tx.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, "
        "applied_at timestamptz NOT NULL DEFAULT now())");
    const int current =
        tx.exec1("SELECT COALESCE(max(version), 0) FROM schema_migrations")[0].as<int>();
    const std::vector<std::string>& migrations = pg::Migrations();
    if (current > static_cast<int>(migrations.size())) {
      return absl::FailedPreconditionError(absl::StrCat("the database schema is version ", current,
                                                        ", newer than this lobby's ",
                                                        migrations.size(), ": upgrade the lobby"));
    }
    for (int v = current + 1; v <= static_cast<int>(migrations.size()); ++v) {
      tx.exec(migrations[v - 1]);
      tx.exec_params("INSERT INTO schema_migrations (version) VALUES ($1)", v);
    }
    tx.commit();
    return absl::OkStatus();
  });
}

absl::StatusOr<int64_t> PostgresStore::CreateMatch(const MatchRecord& m) {
  return CreateMatchWithin(m, nullptr);
}

absl::StatusOr<int64_t> PostgresStore::CreateMatchWithin(
    const MatchRecord& m, const std::function<absl::Status(const Holdings&)>& check) {
  int64_t id = 0;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::work tx(conn.c);
    if (check) {
      // One create at a time per creator (over every instance), so that creates at once cannot
      // all pass a quota that only one of them fits.
      tx.exec_prepared("lock_creator", m.creator);
      pqxx::row r = tx.exec_prepared1("holdings", m.creator);
      const Holdings held{
          .waiting = r[0].as<int>(), .bot_seats = r[1].as<int>(), .bot_matches = r[2].as<int>()};
      if (absl::Status s = check(held); !s.ok()) return s;
    }
    id = pg::InsertMatch(tx, m);
    tx.commit();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return id;
}

absl::StatusOr<bool> PostgresStore::TakeSeat(int64_t match_id, int seat, const std::string& name,
                                             const std::string& token_hash, int64_t now_ms,
                                             int64_t player_id) {
  bool started = false;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    pqxx::row r =
        tx.exec_prepared1("take_seat", match_id, seat, name, token_hash, now_ms, player_id);
    if (r[1].is_null()) return absl::NotFoundError(absl::StrCat("there is no match ", match_id));
    // Not taken: the match is over (cancelled, say), or someone holds that seat (a match
    // starts only once every seat is held).
    if (r[0].as<int>() == 0 && r[1].as<int>() == static_cast<int>(MatchStatus::kFinished)) {
      return absl::FailedPreconditionError(
          absl::StrCat("match ", match_id, " is over: nobody can join it"));
    }
    if (r[0].as<int>() == 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("seat ", seat + 1, " of match ", match_id, " is already taken"));
    }
    started = r[1].as<int>() == static_cast<int>(MatchStatus::kActive);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  Announce({{.match_id = match_id, .ply = 0, .time_ms = pg::NowMs()}});
  return started;
}

absl::Status PostgresStore::AppendMove(int64_t match_id, const MoveCommit& commit) {
  std::promise<absl::Status> result;
  std::future<absl::Status> landed = result.get_future();
  AppendMoveAsync(match_id, commit, [&result](absl::Status s) { result.set_value(std::move(s)); });
  return landed.get();
}

void PostgresStore::AppendMoveAsync(int64_t match_id, MoveCommit commit,
                                    std::function<void(absl::Status)> done) {
  {
    std::lock_guard<std::mutex> lock(append_mu_);
    if (!closing_) {
      appends_.push_back({match_id, std::move(commit), std::move(done)});
      append_ready_.notify_one();
      return;
    }
  }
  done(absl::UnavailableError("the lobby's database writer is shutting down"));
}

void PostgresStore::WriteAppends() {
  const size_t most = static_cast<size_t>(std::max(1, options_.max_append_batch));
  std::vector<PendingAppend> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(append_mu_);
      for (;;) {
        // Closing still commits what was queued: those callers are waiting for an answer.
        if (closing_ && appends_.empty()) return;
        // A match has one move in flight at a time, whatever the writer: should a second one
        // be queued, it waits until the first has landed, so that it is checked against it.
        for (auto it = appends_.begin(); it != appends_.end() && batch.size() < most;) {
          if (!in_flight_.insert(it->match_id).second) {
            ++it;
            continue;
          }
          batch.push_back(std::move(*it));
          it = appends_.erase(it);
        }
        if (!batch.empty()) break;
        // Nothing to take (or only moves of matches in flight): wait for more, or a landing.
        append_ready_.wait(lock);
      }
      // Another writer can start on what is left while this one commits.
      if (!appends_.empty()) append_ready_.notify_one();
    }
    // In id order: PostgreSQL's plan (a nested loop over the batch, then the primary key) locks
    // the match rows in that order, so two lobbies' batches over the same matches do not
    // deadlock (should they, PostgreSQL aborts one, which then commits its moves one by one).
    std::sort(batch.begin(), batch.end(), [](const PendingAppend& a, const PendingAppend& b) {
      return a.match_id < b.match_id;
    });
    std::vector<absl::Status> results = AppendBatch(batch);
    append_batches_.fetch_add(1, std::memory_order_relaxed);
    appended_moves_.fetch_add(
        static_cast<int64_t>(std::count_if(results.begin(), results.end(),
                                           [](const absl::Status& r) { return r.ok(); })),
        std::memory_order_relaxed);
    bool waiting = false;
    {
      std::lock_guard<std::mutex> lock(append_mu_);
      for (const PendingAppend& p : batch) in_flight_.erase(p.match_id);
      waiting = !appends_.empty();
    }
    // A writer may be waiting for one of these matches.
    if (waiting) append_ready_.notify_all();
    std::vector<MatchChange> changes;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (results[i].ok()) {
        changes.push_back({.match_id = batch[i].match_id,
                           .ply = batch[i].commit.move.ply,
                           .time_ms = batch[i].commit.move.time_ms});
      }
      batch[i].done(std::move(results[i]));
    }
    // After the answers: the players hear first; the other instances within a round trip.
    if (!changes.empty()) Announce(changes);
    batch.clear();
  }
}

std::vector<absl::Status> PostgresStore::AppendBatch(const std::vector<PendingAppend>& batch) {
  std::vector<absl::Status> results(batch.size());
  // A move that ends a match commits alone, in a transaction that also moves the ratings.
  std::vector<PendingAppend> plain;
  std::vector<size_t> plain_index;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].commit.result.has_value()) {
      results[i] = AppendOne(batch[i].match_id, batch[i].commit);
    } else {
      plain.push_back(batch[i]);
      plain_index.push_back(i);
    }
  }
  if (plain.size() < batch.size()) {
    std::vector<absl::Status> rest =
        plain.empty() ? std::vector<absl::Status>{} : AppendBatch(plain);
    for (size_t k = 0; k < rest.size(); ++k) results[plain_index[k]] = std::move(rest[k]);
    return results;
  }
  if (batch.size() == 1) {
    results[0] = AppendOne(batch[0].match_id, batch[0].commit);
    return results;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const PendingAppend& p : batch) {
    const MoveCommit& c = p.commit;
    const MatchResult result = c.result.value_or(MatchResult{});
    rows.push_back({{"m", p.match_id},
                    {"p", c.move.ply},
                    {"ts", c.turn_started_ms},
                    {"d", c.draw_offer},
                    {"st", static_cast<int>(c.result.has_value() ? MatchStatus::kFinished
                                                                 : MatchStatus::kActive)},
                    {"w", result.winner},
                    {"r", static_cast<int>(result.reason)},
                    {"rt", result.text},
                    {"s", c.move.seat},
                    {"mv", c.move.move},
                    {"th", c.move.think_ms},
                    {"cl", c.move.clock_ms},
                    {"t", c.move.time_ms},
                    {"bot", c.move.bot_json},
                    {"mc", c.mover_clock_ms},
                    {"c", c.clocked}});
  }
  const std::string json = pg::Dump(rows);
  std::vector<char> advanced(batch.size(), 0);
  absl::Status s = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    pqxx::result r = tx.exec_prepared("append_moves", json);
    for (const pqxx::row& row : r) {
      const int64_t id = row[0].as<int64_t>();
      for (size_t i = 0; i < batch.size(); ++i) {
        if (batch[i].match_id == id) advanced[i] = 1;
      }
    }
    return absl::OkStatus();
  });
  if (absl::IsInternal(s) || absl::IsAborted(s)) {
    // One bad move (or one lost race on a move row) fails the whole statement: commit each
    // on its own instead, so that only that one fails.
    for (size_t i = 0; i < batch.size(); ++i) {
      results[i] = AppendOne(batch[i].match_id, batch[i].commit);
    }
    return results;
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!s.ok()) {
      results[i] = s;
    } else if (!advanced[i]) {
      results[i] = absl::AbortedError(
          absl::StrCat("match ", batch[i].match_id, " is no longer active at ply ",
                       batch[i].commit.move.ply - 1, ": another move or result came first"));
    }
  }
  return results;
}

absl::Status PostgresStore::AppendOne(int64_t match_id, const MoveCommit& commit) {
  return WithConnection([&](Connection& conn) {
    pqxx::work tx(conn.c);
    const MoveRecord& mv = commit.move;
    const MatchResult result = commit.result.value_or(MatchResult{});
    const int status =
        static_cast<int>(commit.result.has_value() ? MatchStatus::kFinished : MatchStatus::kActive);
    pqxx::row r = tx.exec_prepared1(
        "append_move", match_id, mv.ply, commit.turn_started_ms, commit.draw_offer, status,
        result.winner, static_cast<int>(result.reason), result.text, mv.seat, mv.move, mv.think_ms,
        mv.clock_ms, mv.time_ms, mv.bot_json, commit.mover_clock_ms, commit.clocked);
    if (r[0].as<int>() == 0) {
      return absl::AbortedError(absl::StrCat("match ", match_id, " is no longer active at ply ",
                                             mv.ply - 1, ": another move or result came first"));
    }
    if (commit.result) pg::RateMatch(tx, match_id, *commit.result);
    tx.commit();
    return absl::OkStatus();
  });
}

absl::Status PostgresStore::Finish(int64_t match_id, const FinishCommit& commit) {
  absl::Status s = WithConnection([&](Connection& conn) {
    pqxx::connection& c = conn.c;
    pqxx::work tx(c);
    pqxx::result done =
        tx.exec_prepared("finish_match", match_id, commit.expected_ply, commit.result.winner,
                         static_cast<int>(commit.result.reason), commit.result.text);
    if (done.affected_rows() == 0) {
      return absl::AbortedError(
          absl::StrCat("match ", match_id, " is no longer active at ply ", commit.expected_ply));
    }
    for (size_t i = 0; i < commit.clocks_ms.size(); ++i) {
      tx.exec_prepared("set_clock", match_id, static_cast<int>(i), commit.clocks_ms[i]);
    }
    pg::RateMatch(tx, match_id, commit.result);
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
      return absl::AbortedError(
          absl::StrCat("match ", match_id, " is no longer active at ply ", expected_ply));
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
  return QueryOne<MatchRecord>("load_match_after",
                               absl::NotFoundError(absl::StrCat("there is no match ", match_id)),
                               LoadedMatchFromRow, match_id, after_ply);
}

absl::StatusOr<std::vector<MatchRecord>> PostgresStore::ListMatches(const MatchFilter& f) {
  std::vector<MatchRecord> matches;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::connection& c = conn.c;
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(c);
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
    for (const pqxx::row& r :
         tx.exec_prepared(ListStatementName(filters), pqxx::prepare::make_dynamic_params(params))) {
      matches.push_back(pg::MatchFromRow(r));
    }
    pg::LoadSeats(tx, matches);
    tx.commit();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return matches;
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
      "load_version", absl::NotFoundError(absl::StrCat("there is no match ", match_id)),
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
  Holdings h;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    pqxx::row r = tx.exec_prepared1("holdings", creator);
    h.waiting = r[0].as<int>();
    h.bot_seats = r[1].as<int>();
    h.bot_matches = r[2].as<int>();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return h;
}

absl::StatusOr<int> PostgresStore::BotSeatsInPlay() {
  int seats = 0;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    seats = tx.exec_prepared1("bot_seats_in_play")[0].as<int>();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return seats;
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
                                                                   const std::string& text,
                                                                   int limit) {
  absl::StatusOr<std::vector<MatchChange>> changes = QueryAll<MatchChange>(
      "abort_unstarted",
      [](const pqxx::row& r) {
        return MatchChange{
            .match_id = r[0].as<int64_t>(), .ply = r[1].as<int>(), .time_ms = pg::NowMs()};
      },
      turn_started_before_ms, text, limit);
  if (!changes.ok()) return changes.status();
  std::vector<int64_t> ids;
  for (const MatchChange& c : *changes) ids.push_back(c.match_id);
  if (!changes->empty()) Announce(*changes);
  return ids;
}

}  // namespace ply::lobby
