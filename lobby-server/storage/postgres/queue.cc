// PostgresStore's pairing queue (migrations 7 and 11): a player's row in its pool, alive while
// its stream refreshes it, the pairing that writes the match and both rows' results in one
// transaction, and each player's read of its own result.
#include "lobby-server/storage/postgres/internal.h"

namespace ply::lobby {
namespace pg {

// The pairing queue's statements.
const StatementList& QueueStatements() {
  static const StatementList statements = {
      // A player waits once: joining again replaces the old entry, unless a live stream's
      // entry was just paired.
      {"join_queue",
       "INSERT INTO pairing_queue (player_id, pool, rating, joined_ms, token_hash, alive_ms)"
       " VALUES ($1, $2, $3, $4, $5, $4)"
       " ON CONFLICT (player_id) DO UPDATE SET id = DEFAULT, pool = EXCLUDED.pool,"
       " rating = EXCLUDED.rating, joined_ms = EXCLUDED.joined_ms,"
       " token_hash = EXCLUDED.token_hash, alive_ms = EXCLUDED.alive_ms, match_id = NULL,"
       " seat = NULL WHERE pairing_queue.match_id IS NULL OR pairing_queue.alive_ms < $6"
       " RETURNING id"},
      {"leave_queue", "DELETE FROM pairing_queue WHERE id = $1"},
      {"queue_result", "SELECT match_id, seat FROM pairing_queue WHERE id = $1"},
      {"refresh_queue_result",
       "UPDATE pairing_queue SET alive_ms = greatest(alive_ms, $2) WHERE id = $1"
       " RETURNING match_id, seat"},
      {"lock_entry",
       "SELECT id FROM pairing_queue WHERE id = $1 AND match_id IS NULL FOR UPDATE SKIP LOCKED"},
      // The pool's entries whose streams are gone (their instance died, say) leave it.
      {"drop_dead_entries",
       "DELETE FROM pairing_queue WHERE pool = $1 AND alive_ms < $2 AND id <> $3"},
      {"closest_entry",
       "SELECT q.id, q.player_id, q.rating, q.joined_ms, p.name, q.token_hash FROM pairing_queue q"
       " JOIN players p ON p.id = q.player_id"
       " WHERE q.pool = $2 AND q.id <> $1 AND q.match_id IS NULL AND q.alive_ms >= $9"
       " AND abs(q.rating - $3) <= least($8::double precision,"
       "   $6::double precision + $7::double precision * ($5 - least(q.joined_ms, $4)) / 1000.0)"
       " ORDER BY abs(q.rating - $3), q.joined_ms LIMIT 1 FOR UPDATE OF q SKIP LOCKED"},
      {"set_queue_result", "UPDATE pairing_queue SET match_id = $2, seat = $3 WHERE id = $1"},
      // When the player did not come to a paired match (the partial index keeps it to those).
      {"no_shows",
       "SELECT no_show_ms FROM seats WHERE player_id = $1 AND no_show_ms >= $2"
       " ORDER BY no_show_ms DESC LIMIT 100"},
      {"mark_no_show", "UPDATE seats SET no_show_ms = $3 WHERE match_id = $1 AND seat = $2"},
      // A match between people whose side to move is the player, before their first move.
      {"awaiting_first_move",
       "SELECT m.id FROM seats s JOIN matches m ON m.id = s.match_id"
       " WHERE s.player_id = $1 AND m.status = 2 AND m.ply < 2 AND s.seat = m.ply"
       " AND NOT EXISTS (SELECT 1 FROM seats o WHERE o.match_id = m.id AND o.kind <> 1)"
       " ORDER BY s.match_id DESC LIMIT 1"},
      // Over the player's last ten rated matches of the game that began (each side moved):
      // casual games (against a bot, or oneself) cost nothing to lose from the second seat,
      // and aborted ones (a pairing not come to) nothing at all, so counting them let a player
      // choose to move first.
      {"first_move_balance",
       "SELECT COALESCE(sum(CASE WHEN seat = 0 THEN 1 ELSE -1 END), 0)::integer FROM"
       " (SELECT s.seat FROM seats s JOIN matches m ON m.id = s.match_id WHERE s.player_id = $1"
       "  AND m.game = $2 AND m.rated AND m.ply >= 2 ORDER BY s.match_id DESC LIMIT 10) last"},
  };
  return statements;
}

}  // namespace pg

absl::StatusOr<int64_t> PostgresStore::JoinQueue(const QueueEntry& e, int64_t alive_since_ms) {
  // A second Pair for the player takes the row over under a new id (the first stream then
  // finds its row gone), unless the row was just paired.
  return QueryOne<int64_t>(
      "join_queue",
      [] {
        return absl::FailedPreconditionError(
            "you were paired a moment ago from another connection: see `ply history`");
      },
      pg::IdFromRow, e.player_id, e.pool, e.rating, e.joined_ms, e.token_hash, alive_since_ms);
}

void PostgresStore::LeaveQueue(int64_t entry_id) {
  (void)WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    tx.exec_prepared("leave_queue", entry_id);
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<int64_t>> PostgresStore::NoShows(int64_t player_id, int64_t since_ms) {
  return QueryAll<int64_t>(
      "no_shows", [](const pqxx::row& r) { return r[0].as<int64_t>(); }, player_id, since_ms);
}

absl::StatusOr<std::optional<int64_t>> PostgresStore::AwaitingFirstMove(int64_t player_id) {
  absl::StatusOr<std::vector<int64_t>> ids = QueryAll<int64_t>(
      "awaiting_first_move", [](const pqxx::row& r) { return r[0].as<int64_t>(); }, player_id);
  if (!ids.ok()) return ids.status();
  if (ids->empty()) return std::optional<int64_t>();
  return std::optional<int64_t>(ids->front());
}

absl::Status PostgresStore::MarkNoShows(int64_t match_id, const std::vector<int>& seats,
                                        int64_t now_ms) {
  return WithConnection([&](Connection& conn) {
    pqxx::work tx(conn.c);
    for (int seat : seats) tx.exec_prepared("mark_no_show", match_id, seat, now_ms);
    tx.commit();
    return absl::OkStatus();
  });
}

absl::StatusOr<std::optional<Pairing>> PostgresStore::QueueResult(int64_t entry_id,
                                                                  int64_t refresh_ms) {
  auto gone = [] { return absl::AbortedError("this player queued again from another connection"); };
  auto result = [](const pqxx::row& r) -> std::optional<Pairing> {
    if (r[0].is_null()) return std::nullopt;
    return Pairing{.match_id = r[0].as<int64_t>(), .seat = r[1].as<int>()};
  };
  if (refresh_ms > 0) {
    return QueryOne<std::optional<Pairing>>("refresh_queue_result", gone, result, entry_id,
                                            refresh_ms);
  }
  return QueryOne<std::optional<Pairing>>("queue_result", gone, result, entry_id);
}

absl::StatusOr<std::optional<Pairing>> PostgresStore::TryPair(
    const QueueEntry& me, int64_t now_ms, int64_t alive_since_ms, double base_gap, double gap_per_s,
    double max_gap,
    const std::function<absl::StatusOr<PairedMatch>(const QueueEntry&, const QueueEntry&)>& make) {
  std::optional<Pairing> made;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::work tx(conn.c);
    // Our own row first: another instance pairing us holds it (SKIP LOCKED: then not now).
    if (tx.exec_prepared("lock_entry", me.id).empty()) return absl::OkStatus();
    tx.exec_prepared("drop_dead_entries", me.pool, alive_since_ms, me.id);
    pqxx::result other = tx.exec_prepared("closest_entry", me.id, me.pool, me.rating, me.joined_ms,
                                          now_ms, base_gap, gap_per_s, max_gap, alive_since_ms);
    if (other.empty()) {
      tx.commit();
      return absl::OkStatus();
    }
    QueueEntry them{.id = other[0][0].as<int64_t>(),
                    .player_id = other[0][1].as<int64_t>(),
                    .name = other[0][4].as<std::string>(),
                    .pool = me.pool,
                    .rating = other[0][2].as<double>(),
                    .joined_ms = other[0][3].as<int64_t>(),
                    .token_hash = other[0][5].as<std::string>()};
    QueueEntry mine = me;
    const std::string game = me.pool.substr(0, me.pool.find('|'));
    mine.first_move_balance =
        tx.exec_prepared1("first_move_balance", me.player_id, game)[0].as<int>();
    them.first_move_balance =
        tx.exec_prepared1("first_move_balance", them.player_id, game)[0].as<int>();
    absl::StatusOr<PairedMatch> paired = make(mine, them);
    if (!paired.ok()) return paired.status();
    const int64_t match_id = pg::InsertMatch(tx, paired->match);
    for (int seat = 0; seat < 2; ++seat) {
      const bool mine = seat == paired->my_seat;
      tx.exec_prepared("set_queue_result", mine ? me.id : them.id, match_id, seat);
    }
    tx.commit();
    made = Pairing{.match_id = match_id, .seat = paired->my_seat};
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return made;
}

}  // namespace ply::lobby
