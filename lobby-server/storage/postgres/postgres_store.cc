// PostgresStore's pool: connections opened with every feature's statements prepared, the
// mapping of libpqxx's exceptions to statuses that every call goes through, and migrating the
// schema. The features' statements and calls are in their own files (matches.cc, moves.cc,
// players.cc, ...).
#include "lobby-server/storage/postgres/postgres_store.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lobby-server/storage/postgres/internal.h"
#include "lobby-server/storage/postgres/migrations.h"

namespace ply::lobby {
namespace pg {

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

}  // namespace pg

namespace {

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
  // Bound connection attempts, and notice a server that is gone without a word (a lost
  // machine: no reset ever comes) within about 25 s idle, or 10 s with data unacknowledged.
  // With several hosts (host=a,b,c port=p,q,r: a primary and its standbys), libpq tries them in
  // turn and keeps the one that accepts writes, so after a failover a new connection finds the
  // new primary.
  std::string extra = absl::StrCat("connect_timeout=", options_.connect_timeout_s,
                                   " keepalives_idle=10 keepalives_interval=5 keepalives_count=3"
                                   " tcp_user_timeout=10000");
  if (options_.url.find("target_session_attrs") == std::string::npos) {
    extra += " target_session_attrs=read-write";
  }
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

std::vector<std::pair<std::string, std::string>> PostgresStore::Statements() {
  std::vector<std::pair<std::string, std::string>> all;
  for (const pg::StatementList* statements :
       {&pg::MatchStatements(), &pg::ListStatements(), &pg::MoveStatements(),
        &pg::PlayerStatements(), &pg::QueueStatements(), &pg::PresenceStatements(),
        &pg::RematchStatements(), &pg::AnalysisStatements(), &pg::PeerStatements()}) {
    all.insert(all.end(), statements->begin(), statements->end());
  }
  return all;
}

std::unique_ptr<PostgresStore::Connection> PostgresStore::Connect(
    const std::string& application_name) {
  std::string conninfo = conninfo_;
  if (!application_name.empty()) {
    conninfo += absl::StrCat(options_.url.find("://") != std::string::npos ? "&" : " ",
                             "application_name=", application_name);
  }
  auto conn = std::make_unique<Connection>(conninfo);
  try {
    // libpqxx prepares a statement on the server when it is first used.
    for (const auto& [name, sql] : Statements()) conn->c.prepare(name, sql);
    pqxx::nontransaction n(conn->c);
    n.exec_prepared("statement_timeout", absl::StrCat(options_.statement_timeout_ms));
  } catch (const pqxx::sql_error& e) {
    // 42P05: this new connection's server session already holds the statement, so it is
    // another client's session handed over by a pooler in transaction or statement mode.
    if (e.sqlstate() != "42P05") throw;
    throw std::runtime_error(
        "the database session is shared with another connection (a pooler such as PgBouncer in "
        "transaction or statement mode?): ply-lobby needs session pooling, for its prepared "
        "statements, LISTEN and advisory locks");
  }
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

}  // namespace ply::lobby
