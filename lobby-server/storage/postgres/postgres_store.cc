#include "lobby-server/storage/postgres/postgres_store.h"

#include <algorithm>
#include <cstdio>
#include <future>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ply::lobby {
namespace {

// Schema versions, oldest first. A released entry is never edited: a change is a new entry.
const std::vector<std::string>& Migrations() {
  static const std::vector<std::string> migrations = {
      // 1: matches, their seats, and an append-only move list.
      R"sql(
CREATE TABLE matches (
  id bigserial PRIMARY KEY,
  game text NOT NULL,
  options jsonb NOT NULL DEFAULT '{}',
  status smallint NOT NULL,
  ply integer NOT NULL DEFAULT 0,
  time_initial_ms bigint,
  time_increment_ms bigint NOT NULL DEFAULT 0,
  bot_pacing_ms bigint NOT NULL DEFAULT 0,
  turn_started_ms bigint NOT NULL DEFAULT 0,
  draw_offer smallint NOT NULL DEFAULT -1,
  winner smallint NOT NULL DEFAULT -1,
  end_reason smallint NOT NULL DEFAULT 0,
  result_text text NOT NULL DEFAULT '',
  open_seats smallint NOT NULL,
  bots_only boolean NOT NULL,
  created_ms bigint NOT NULL
);
CREATE INDEX matches_by_status ON matches (status, id DESC);
CREATE INDEX matches_by_game ON matches (game, id DESC);
CREATE TABLE seats (
  match_id bigint NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
  seat smallint NOT NULL,
  kind smallint NOT NULL,
  difficulty text NOT NULL DEFAULT '',
  display_name text NOT NULL DEFAULT '',
  token_hash text UNIQUE,
  clock_ms bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (match_id, seat)
);
CREATE TABLE moves (
  match_id bigint NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
  ply integer NOT NULL,
  seat smallint NOT NULL,
  move text NOT NULL,
  think_ms bigint NOT NULL,
  clock_ms bigint NOT NULL,
  time_ms bigint NOT NULL,
  bot jsonb,
  PRIMARY KEY (match_id, ply)
);
)sql",
      // 2: room on each page for the in-place (HOT) updates every move makes to its match row.
      R"sql(
ALTER TABLE matches SET (fillfactor = 70);
ALTER TABLE seats SET (fillfactor = 70);
)sql",
      // 3: ListMatches answers from an index for every combination of its filters (issue #20:
      // a filtered call read the whole table at 1 M matches). Each combination has an index
      // whose conditions are exactly its filters (leading columns, or the index's predicate)
      // followed by id DESC, the list's order, so a page reads its rows and stops, even when
      // the filters match nothing: open seats and bot-only play are correlated with status in
      // ways the planner cannot estimate, and a scan of a broader index would then read all of
      // it. Open seats exist only while a match waits and bots-only matches are a minority, so
      // the partial indexes stay small; "open" or "bots" alone walk the primary key, where
      // they are common enough to fill a page quickly. No indexed column changes with a move:
      // moves remain HOT updates.
      R"sql(
CREATE INDEX matches_by_game_status ON matches (game, status, id DESC);
CREATE INDEX matches_open_by_game ON matches (game, id DESC) WHERE open_seats > 0;
CREATE INDEX matches_open_by_status ON matches (status, id DESC) WHERE open_seats > 0;
CREATE INDEX matches_open_by_game_status ON matches (game, status, id DESC) WHERE open_seats > 0;
CREATE INDEX matches_bots_by_game ON matches (game, id DESC) WHERE bots_only;
CREATE INDEX matches_bots_by_status ON matches (status, id DESC) WHERE bots_only;
CREATE INDEX matches_bots_by_game_status ON matches (game, status, id DESC) WHERE bots_only;
CREATE INDEX matches_open_bots ON matches (id DESC) WHERE open_seats > 0 AND bots_only;
)sql",
  };
  return migrations;
}

constexpr char kMatchColumns[] =
    "id, game, options::text, status, ply, COALESCE(time_initial_ms, -1), time_increment_ms, "
    "bot_pacing_ms, turn_started_ms, draw_offer, winner, end_reason, result_text, created_ms";

// Every statement the store runs, by name. Parameters are $n: no SQL is built from values.
const std::vector<std::pair<std::string, std::string>>& Statements() {
  static const std::vector<std::pair<std::string, std::string>> statements = {
      // A new match and its seats in one statement (one round trip, atomic on its own); the
      // seats come as a JSON array.
      {"create_match",
       "WITH m AS ("
       "  INSERT INTO matches (game, options, status, time_initial_ms, time_increment_ms,"
       "    bot_pacing_ms, turn_started_ms, open_seats, bots_only, created_ms)"
       "  VALUES ($1, $2::jsonb, $3, NULLIF($4::bigint, -1), $5, $6, $7, $8, $9, $10)"
       "  RETURNING id),"
       " s AS ("
       "  INSERT INTO seats (match_id, seat, kind, difficulty, display_name, token_hash, clock_ms)"
       "  SELECT m.id, x.seat, x.kind, x.difficulty, x.name, NULLIF(x.hash, ''), x.clock"
       "  FROM m, jsonb_to_recordset($11::jsonb)"
       "    AS x(seat integer, kind integer, difficulty text, name text, hash text, clock bigint))"
       " SELECT id FROM m"},
      // A person takes an open seat of a waiting match, and the match starts when that was the
      // last open seat: one statement. The seat row's lock settles a race for the same seat;
      // the match row's lock orders joins of different seats, so exactly the last one starts
      // it. Returns (seat taken?, the match's status after, or before when not taken; NULL
      // when there is no such match).
      {"take_seat",
       "WITH taken AS ("
       "  UPDATE seats SET display_name = $3, token_hash = $4"
       "  WHERE match_id = $1 AND seat = $2 AND kind = 1 AND token_hash IS NULL"
       "  AND EXISTS (SELECT 1 FROM matches WHERE id = $1 AND status = 1) RETURNING 1),"
       " filled AS ("
       "  UPDATE matches SET open_seats = open_seats - 1,"
       "    status = CASE WHEN open_seats = 1 THEN 2 ELSE status END,"
       "    turn_started_ms = CASE WHEN open_seats = 1 THEN $5 ELSE turn_started_ms END"
       "  WHERE id = $1 AND EXISTS (SELECT 1 FROM taken) RETURNING status)"
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
      {"load_match", absl::StrCat("SELECT ", kMatchColumns, " FROM matches WHERE id = $1")},
      {"load_seats",
       "SELECT match_id, seat, kind, difficulty, display_name, COALESCE(token_hash, ''), "
       "clock_ms FROM seats WHERE match_id = ANY($1::bigint[]) ORDER BY match_id, seat"},
      {"load_moves",
       "SELECT ply, seat, move, think_ms, clock_ms, time_ms, COALESCE(bot::text, '') "
       "FROM moves WHERE match_id = $1 ORDER BY ply"},
      {"to_resume",
       "SELECT id FROM matches WHERE status = 2 AND (time_initial_ms IS NOT NULL OR EXISTS "
       "(SELECT 1 FROM seats WHERE seats.match_id = matches.id AND seats.kind = 2)) ORDER BY id"},
      {"find_token", "SELECT match_id, seat FROM seats WHERE token_hash = $1"},
      {"statement_timeout", "SELECT set_config('statement_timeout', $1, false)"},
      // For the rest of a transaction: plan each statement for its values. A generic plan
      // (what PostgreSQL settles on after five calls) picks one index for every value, and a
      // list filtered by a status that no open match has then reads every open match.
      {"custom_plans", "SELECT set_config('plan_cache_mode', 'force_custom_plan', true)"},
  };
  return statements;
}

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
  return absl::StrCat("SELECT ", kMatchColumns, " FROM matches", where.empty() ? "" : " WHERE ",
                      absl::StrJoin(where, " AND "), " ORDER BY id DESC LIMIT $", ++n, "::integer");
}

// JSON text for a parameter; invalid UTF-8 (which protobuf strings cannot carry anyway) is
// replaced rather than thrown on.
std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
      m.seats.push_back(std::move(s));
    }
  }
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

}  // namespace

struct PostgresStore::Connection {
  explicit Connection(const std::string& conninfo) : c(conninfo) {}
  pqxx::connection c;
};

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

PostgresStore::PostgresStore(PostgresOptions options) : options_(std::move(options)) {
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
  {
    std::lock_guard<std::mutex> lock(append_mu_);
    closing_ = true;
  }
  append_ready_.notify_all();
  for (std::thread& t : writers_) t.join();
}

int PostgresStore::SchemaVersion() { return static_cast<int>(Migrations().size()); }

std::unique_ptr<PostgresStore::Connection> PostgresStore::Connect() {
  auto conn = std::make_unique<Connection>(conninfo_);
  for (const auto& [name, sql] : Statements()) conn->c.prepare(name, sql);
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
    const std::vector<std::string>& migrations = Migrations();
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
  int64_t id = 0;
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [k, v] : m.options) options[k] = v;
  int open = 0;
  bool bots_only = true;
  for (const SeatRecord& s : m.seats) {
    if (!s.taken()) ++open;
    if (s.kind != SeatKind::kBot) bots_only = false;
  }
  nlohmann::json seats = nlohmann::json::array();
  for (size_t i = 0; i < m.seats.size(); ++i) {
    const SeatRecord& s = m.seats[i];
    seats.push_back({{"seat", i},
                     {"kind", static_cast<int>(s.kind)},
                     {"difficulty", s.difficulty},
                     {"name", s.display_name},
                     {"hash", s.token_hash},
                     {"clock", s.clock_ms}});
  }
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    id = tx.exec_prepared1("create_match", m.game, Dump(options), static_cast<int>(m.status),
                           m.time_initial_ms.value_or(-1), m.time_increment_ms, m.bot_pacing_ms,
                           m.turn_started_ms, open, bots_only, m.created_ms, Dump(seats))[0]
             .as<int64_t>();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return id;
}

absl::StatusOr<bool> PostgresStore::TakeSeat(int64_t match_id, int seat, const std::string& name,
                                             const std::string& token_hash, int64_t now_ms) {
  bool started = false;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    pqxx::row r = tx.exec_prepared1("take_seat", match_id, seat, name, token_hash, now_ms);
    if (r[1].is_null()) return absl::NotFoundError(absl::StrCat("there is no match ", match_id));
    // Not taken: someone holds that seat (a match starts only once every seat is held).
    if (r[0].as<int>() == 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("seat ", seat, " of match ", match_id, " is already taken"));
    }
    started = r[1].as<int>() == static_cast<int>(MatchStatus::kActive);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
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
    for (size_t i = 0; i < batch.size(); ++i) batch[i].done(std::move(results[i]));
    batch.clear();
  }
}

std::vector<absl::Status> PostgresStore::AppendBatch(const std::vector<PendingAppend>& batch) {
  std::vector<absl::Status> results(batch.size());
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
  const std::string json = Dump(rows);
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
    pqxx::nontransaction tx(conn.c);
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
    return absl::OkStatus();
  });
}

absl::Status PostgresStore::Finish(int64_t match_id, const FinishCommit& commit) {
  return WithConnection([&](Connection& conn) {
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
    tx.commit();
    return absl::OkStatus();
  });
}

absl::Status PostgresStore::SetDrawOffer(int64_t match_id, int expected_ply, int seat) {
  return WithConnection([&](Connection& conn) {
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
}

absl::StatusOr<MatchRecord> PostgresStore::LoadMatch(int64_t match_id) {
  std::vector<MatchRecord> found;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::connection& c = conn.c;
    // One snapshot for the match, its seats and its moves.
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(c);
    pqxx::result r = tx.exec_prepared("load_match", match_id);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("there is no match ", match_id));
    found.push_back(MatchFromRow(r[0]));
    LoadSeats(tx, found);
    for (const pqxx::row& row : tx.exec_prepared("load_moves", match_id)) {
      MoveRecord mv;
      mv.ply = row[0].as<int>();
      mv.seat = row[1].as<int>();
      mv.move = row[2].as<std::string>();
      mv.think_ms = row[3].as<int64_t>();
      mv.clock_ms = row[4].as<int64_t>();
      mv.time_ms = row[5].as<int64_t>();
      mv.bot_json = row[6].as<std::string>();
      found[0].moves.push_back(std::move(mv));
    }
    tx.commit();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return std::move(found[0]);
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
      matches.push_back(MatchFromRow(r));
    }
    LoadSeats(tx, matches);
    tx.commit();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return matches;
}

absl::StatusOr<std::vector<int64_t>> PostgresStore::MatchesToResume() {
  std::vector<int64_t> ids;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::connection& c = conn.c;
    pqxx::nontransaction tx(c);
    for (const pqxx::row& r : tx.exec_prepared("to_resume")) ids.push_back(r[0].as<int64_t>());
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return ids;
}

absl::StatusOr<std::optional<std::pair<int64_t, int>>> PostgresStore::FindToken(
    const std::string& token_hash) {
  std::optional<std::pair<int64_t, int>> found;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::connection& c = conn.c;
    pqxx::nontransaction tx(c);
    pqxx::result r = tx.exec_prepared("find_token", token_hash);
    if (!r.empty()) found = std::make_pair(r[0][0].as<int64_t>(), r[0][1].as<int>());
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return found;
}

}  // namespace ply::lobby
