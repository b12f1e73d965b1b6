// What PostgresStore's files share and its callers do not see: the libpqxx connection, the
// prepared statements of each feature (every connection prepares them all), and the row
// conversions and writes that more than one feature makes. Only storage/postgres/ includes it.
#ifndef PLY_LOBBY_SERVER_STORAGE_POSTGRES_INTERNAL_H_
#define PLY_LOBBY_SERVER_STORAGE_POSTGRES_INTERNAL_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lobby-server/storage/postgres/postgres_store.h"

namespace ply::lobby {

struct PostgresStore::Connection {
  explicit Connection(const std::string& conninfo) : c(conninfo) {}
  pqxx::connection c;
};

namespace pg {

// Statements by name. Parameters are $n: no SQL is built from values.
using StatementList = std::vector<std::pair<std::string, std::string>>;

// Each feature's statements, defined in its file (matches.cc: matches, seats, quotas and
// sweeps, and ListMatches' one statement per combination of filters; moves.cc: moves).
const StatementList& MatchStatements();
const StatementList& ListStatements();
const StatementList& MoveStatements();
const StatementList& PlayerStatements();
const StatementList& QueueStatements();
const StatementList& PresenceStatements();
const StatementList& RematchStatements();
const StatementList& AnalysisStatements();
const StatementList& PeerStatements();

// A match row's columns as MatchFromRow reads them.
inline constexpr char kMatchColumns[] =
    "id, game, options::text, status, ply, COALESCE(time_initial_ms, -1), time_increment_ms, "
    "bot_pacing_ms, turn_started_ms, draw_offer, winner, end_reason, result_text, created_ms, "
    "rated, rating_note";
// How many they are: a statement's own columns come after them.
inline constexpr int kMatchColumnCount = 16;

// JSON text for a parameter; invalid UTF-8 (which protobuf strings cannot carry anyway) is
// replaced rather than thrown on.
std::string Dump(const nlohmann::json& j);

int64_t NowMs();

// NOT_FOUND: "there is no match <id>".
absl::Status NoMatch(int64_t match_id);

// A match (without seats and moves) from a row of kMatchColumns.
MatchRecord MatchFromRow(const pqxx::row& r);

// Attaches the seats of `matches` with one query.
void LoadSeats(pqxx::transaction_base& tx, std::vector<MatchRecord>& matches);

// Writes a new match and its seats in `tx`; returns its id.
int64_t InsertMatch(pqxx::transaction_base& tx, const MatchRecord& m);
// Runs `check` (if any) on what m's creator and its address hold, both locked in `tx` against
// other creates of theirs until it ends.
absl::Status CheckQuota(pqxx::transaction_base& tx, const MatchRecord& m, const QuotaCheck& check);

// Moves the ratings of a rated match that `tx` has just ended (Glicko-2, one game a period).
// `plies`: the moves played when the match ended.
void RateMatch(pqxx::transaction_base& tx, int64_t match_id, const MatchResult& result, int plies);

// The first column as an id (a match's, a queue entry's).
inline int64_t IdFromRow(const pqxx::row& r) { return r[0].as<int64_t>(); }

}  // namespace pg

template <typename T, typename Work>
absl::StatusOr<T> PostgresStore::WithConnection(Work work) {
  std::optional<T> out;
  absl::Status status = WithConnection([&](Connection& conn) -> absl::Status {
    absl::StatusOr<T> answer = work(conn);
    if (!answer.ok()) return answer.status();
    out.emplace(*std::move(answer));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return *std::move(out);
}

template <typename T, typename Parse, typename... Args>
absl::StatusOr<std::optional<T>> PostgresStore::QueryFirst(const std::string& statement,
                                                           Parse parse, const Args&... args) {
  std::optional<T> out;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    pqxx::result r = tx.exec_prepared(statement, args...);
    if (!r.empty()) out.emplace(parse(r[0]));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

template <typename T, typename None, typename Parse, typename... Args>
absl::StatusOr<T> PostgresStore::QueryOne(const std::string& statement, None none, Parse parse,
                                          const Args&... args) {
  absl::StatusOr<std::optional<T>> first = QueryFirst<T>(statement, std::move(parse), args...);
  if (!first.ok()) return first.status();
  if (!first->has_value()) return absl::Status(none());
  return std::move(**first);
}

template <typename T, typename Parse, typename... Args>
absl::StatusOr<std::vector<T>> PostgresStore::QueryAll(const std::string& statement, Parse parse,
                                                       const Args&... args) {
  std::vector<T> out;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    for (const pqxx::row& r : tx.exec_prepared(statement, args...)) out.push_back(parse(r));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_STORAGE_POSTGRES_INTERNAL_H_
