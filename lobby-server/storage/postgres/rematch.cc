// PostgresStore's rematches (migration 9): an offer recorded on the finished match, and the
// rematch made, under the match row's lock, once both players agreed.
#include "absl/strings/str_cat.h"
#include "lobby-server/storage/postgres/internal.h"

namespace ply::lobby {
namespace pg {

// Rematch offers' statements.
const StatementList& RematchStatements() {
  static const StatementList statements = {
      // A finished match's rematch, its row locked until the offer is recorded or the rematch
      // made, so that two offers at once make one rematch.
      {"lock_rematch",
       "SELECT status, rematch_offer, COALESCE(rematch_hash, ''), COALESCE(rematch_id, 0),"
       " end_reason, ply FROM matches WHERE id = $1 FOR UPDATE"},
      {"set_rematch_offer",
       "UPDATE matches SET rematch_offer = $2, rematch_hash = NULLIF($3, '') WHERE id = $1"},
      {"set_rematch",
       "UPDATE matches SET rematch_id = $2, rematch_offer = -1, rematch_hash = NULL WHERE id = $1"},
  };
  return statements;
}

}  // namespace pg

absl::StatusOr<RematchState> PostgresStore::OfferRematch(const RematchOffer& offer) {
  RematchState state;
  int ply = 0;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::work tx(conn.c);
    pqxx::result r = tx.exec_prepared("lock_rematch", offer.match_id);
    if (r.empty()) return pg::NoMatch(offer.match_id);
    if (r[0][0].as<int>() != static_cast<int>(MatchStatus::kFinished)) {
      return absl::FailedPreconditionError(
          absl::StrCat("match ", offer.match_id, " is not over: a rematch comes after the game"));
    }
    state = {.offer = r[0][1].as<int>(), .rematch_id = r[0][3].as<int64_t>()};
    ply = r[0][5].as<int>();
    if (state.rematch_id != 0) return absl::OkStatus();
    const int other = 1 - offer.seat;
    if (!offer.accept_now && state.offer != other) {
      tx.exec_prepared("set_rematch_offer", offer.match_id, offer.seat, offer.token_hash);
      tx.commit();
      state.offer = offer.seat;
      return absl::OkStatus();
    }
    // The offerer takes the other seat in the rematch, the other player this one.
    MatchRecord next = offer.next;
    next.seats[other].token_hash = offer.token_hash;
    if (!offer.accept_now) next.seats[offer.seat].token_hash = r[0][2].as<std::string>();
    // The rematch counts against its creator's quotas as a new match would.
    if (absl::Status s = pg::CheckQuota(tx, next, offer.check); !s.ok()) return s;
    const int64_t id = pg::InsertMatch(tx, next);
    tx.exec_prepared("set_rematch", offer.match_id, id);
    tx.commit();
    state = {.offer = -1, .rematch_id = id, .made = true};
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  // Watchers of the old match on other instances hear of the offer or the rematch (at the
  // match's ply: a change at an older one is old news to them).
  Announce({{.match_id = offer.match_id, .ply = ply, .time_ms = pg::NowMs()}});
  return state;
}

absl::StatusOr<RematchState> PostgresStore::WithdrawRematch(int64_t match_id) {
  RematchState state;
  int ply = 0;
  absl::Status status = WithConnection([&](Connection& conn) {
    pqxx::work tx(conn.c);
    pqxx::result r = tx.exec_prepared("lock_rematch", match_id);
    if (r.empty()) return pg::NoMatch(match_id);
    state = {.offer = r[0][1].as<int>(), .rematch_id = r[0][3].as<int64_t>()};
    ply = r[0][5].as<int>();
    if (state.rematch_id == 0 && state.offer >= 0) {
      tx.exec_prepared("set_rematch_offer", match_id, -1, "");
      tx.commit();
      state.offer = -1;
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  Announce({{.match_id = match_id, .ply = ply, .time_ms = pg::NowMs()}});
  return state;
}

}  // namespace ply::lobby
