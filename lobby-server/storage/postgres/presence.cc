// PostgresStore's presence rows (migration 8): per seat and lobby instance, the seat holder's
// open streams and when it was last seen; written on those events only, never per move, and
// set whole by each instance's beat (so that a lost write is mended).
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lobby-server/storage/postgres/internal.h"

namespace ply::lobby {
namespace pg {

// Presence's statements.
const StatementList& PresenceStatements() {
  static const StatementList statements = {
      {"presence_add",
       "INSERT INTO presence (match_id, seat, instance, streams, seen_ms)"
       " VALUES ($1, $2, $3, GREATEST($4, 0), $5) ON CONFLICT (match_id, seat, instance)"
       " DO UPDATE SET streams = GREATEST(presence.streams + $4, 0),"
       " seen_ms = GREATEST(presence.seen_ms, $5)"},
      {"presence_touch",
       "INSERT INTO presence (match_id, seat, instance, streams, seen_ms)"
       " SELECT x.m, x.s, $2, 0, $3 FROM jsonb_to_recordset($1::jsonb) AS x(m bigint, s integer)"
       " ON CONFLICT (match_id, seat, instance)"
       " DO UPDATE SET seen_ms = GREATEST(presence.seen_ms, $3)"},
      // The beat: this instance's open streams are exactly $1's, and alive. A row written
      // after the beat's snapshot (seen later than $3) keeps what that write said.
      {"presence_streams",
       "INSERT INTO presence (match_id, seat, instance, streams, seen_ms)"
       " SELECT x.m, x.s, $2, x.n, $3"
       " FROM jsonb_to_recordset($1::jsonb) AS x(m bigint, s integer, n integer)"
       " ON CONFLICT (match_id, seat, instance) DO UPDATE SET"
       " streams = CASE WHEN presence.seen_ms > $3 THEN presence.streams ELSE EXCLUDED.streams END,"
       " seen_ms = GREATEST(presence.seen_ms, $3)"},
      {"presence_closed",
       "UPDATE presence SET streams = 0 WHERE instance = $2 AND streams > 0 AND seen_ms <= $3"
       " AND (match_id, seat) NOT IN"
       " (SELECT x.m, x.s FROM jsonb_to_recordset($1::jsonb) AS x(m bigint, s integer))"},
      {"presence_prune",
       "DELETE FROM presence WHERE (match_id, seat, instance) IN (SELECT p.match_id, p.seat,"
       " p.instance FROM presence p JOIN matches m ON m.id = p.match_id WHERE m.status = 3"
       " LIMIT $1 FOR UPDATE OF p SKIP LOCKED)"},
      {"presence_of",
       "SELECT match_id, seat, bool_or((streams > 0 AND seen_ms >= $2) OR seen_ms >= $3),"
       " max(seen_ms) FROM presence WHERE match_id = ANY($1::bigint[])"
       " GROUP BY match_id, seat ORDER BY match_id, seat"},
  };
  return statements;
}

}  // namespace pg

absl::Status PostgresStore::AddPresence(int64_t match_id, int seat, int delta, int64_t now_ms) {
  return WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    tx.exec_prepared("presence_add", match_id, seat, origin_, delta, now_ms);
    return absl::OkStatus();
  });
}

absl::Status PostgresStore::TouchPresence(const std::vector<std::pair<int64_t, int>>& seats,
                                          const std::vector<SeatStreams>* open, int64_t now_ms) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [match_id, seat] : seats) rows.push_back({{"m", match_id}, {"s", seat}});
  nlohmann::json streams = nlohmann::json::array();
  if (open != nullptr) {
    for (const SeatStreams& o : *open) {
      streams.push_back({{"m", o.match_id}, {"s", o.seat}, {"n", o.streams}});
    }
  }
  if (rows.empty() && open == nullptr) return absl::OkStatus();
  return WithConnection([&](Connection& conn) {
    pqxx::work tx(conn.c);
    if (!rows.empty()) tx.exec_prepared("presence_touch", pg::Dump(rows), origin_, now_ms);
    if (open != nullptr) {
      const std::string listed = pg::Dump(streams);
      if (!streams.empty()) tx.exec_prepared("presence_streams", listed, origin_, now_ms);
      tx.exec_prepared("presence_closed", listed, origin_, now_ms);
    }
    tx.commit();
    return absl::OkStatus();
  });
}

void PostgresStore::PrunePresence(int limit) {
  (void)WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    tx.exec_prepared("presence_prune", limit);
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<SeatPresence>> PostgresStore::LoadPresence(
    const std::vector<int64_t>& match_ids, int64_t alive_since_ms, int64_t seen_since_ms) {
  if (match_ids.empty()) return std::vector<SeatPresence>{};
  std::vector<std::string> ids;
  for (int64_t id : match_ids) ids.push_back(absl::StrCat(id));
  return QueryAll<SeatPresence>(
      "presence_of",
      [](const pqxx::row& r) {
        return SeatPresence{.match_id = r[0].as<int64_t>(),
                            .seat = r[1].as<int>(),
                            .connected = r[2].as<bool>(),
                            .last_seen_ms = r[3].as<int64_t>()};
      },
      absl::StrCat("{", absl::StrJoin(ids, ","), "}"), alive_since_ms, seen_since_ms);
}

}  // namespace ply::lobby
