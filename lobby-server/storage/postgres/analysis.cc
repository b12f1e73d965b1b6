// PostgresStore's post-game analyses (migration 10): a row claims a match's analysis for one
// request, renewed while it runs, then holds the result for every later request.
#include "lobby-server/storage/postgres/internal.h"

namespace ply::lobby {
namespace pg {

// Analyses' statements.
const StatementList& AnalysisStatements() {
  static const StatementList statements = {
      // A row with no result, claimed by someone else and renewed within the lease, is busy.
      {"claim_analysis",
       "INSERT INTO match_analyses (match_id, holder) VALUES ($1, $2)"
       " ON CONFLICT (match_id) DO UPDATE SET holder = EXCLUDED.holder, claimed_at = now()"
       " WHERE match_analyses.result IS NULL AND (match_analyses.holder = EXCLUDED.holder"
       "  OR match_analyses.claimed_at < now() - make_interval(secs => $3::double precision))"
       " RETURNING true"},
      {"renew_analysis",
       "UPDATE match_analyses SET claimed_at = now()"
       " WHERE match_id = $1 AND holder = $2 AND result IS NULL"},
      {"store_analysis",
       "UPDATE match_analyses SET result = $3::jsonb, done_at = now()"
       " WHERE match_id = $1 AND holder = $2 AND result IS NULL"},
      {"release_analysis",
       "DELETE FROM match_analyses WHERE match_id = $1 AND holder = $2 AND result IS NULL"},
      {"load_analysis",
       "SELECT result::text FROM match_analyses WHERE match_id = $1 AND result IS NOT NULL"},
  };
  return statements;
}

}  // namespace pg

absl::StatusOr<AnalysisClaim> PostgresStore::ClaimAnalysis(int64_t match_id,
                                                           const std::string& holder,
                                                           int64_t lease_ms) {
  AnalysisClaim claim;
  absl::Status s = WithConnection([&](Connection& conn) {
    pqxx::work tx(conn.c);
    if (!tx.exec_prepared("claim_analysis", match_id, holder, lease_ms / 1000.0).empty()) {
      claim.state = AnalysisClaim::State::kClaimed;
    } else {
      pqxx::result stored = tx.exec_prepared("load_analysis", match_id);
      if (!stored.empty()) {
        claim.state = AnalysisClaim::State::kStored;
        claim.result = stored[0][0].as<std::string>();
      }
    }
    tx.commit();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return claim;
}

absl::Status PostgresStore::RenewAnalysis(int64_t match_id, const std::string& holder) {
  return WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    tx.exec_prepared("renew_analysis", match_id, holder);
    return absl::OkStatus();
  });
}

absl::Status PostgresStore::StoreAnalysis(int64_t match_id, const std::string& holder,
                                          const std::string& result) {
  return WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    tx.exec_prepared("store_analysis", match_id, holder, result);
    return absl::OkStatus();
  });
}

void PostgresStore::ReleaseAnalysis(int64_t match_id, const std::string& holder) {
  // Best effort: a claim left behind lapses with its lease.
  (void)WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    tx.exec_prepared("release_analysis", match_id, holder);
    return absl::OkStatus();
  });
}

absl::StatusOr<std::optional<std::string>> PostgresStore::LoadAnalysis(int64_t match_id) {
  return QueryFirst<std::string>(
      "load_analysis", [](const pqxx::row& r) { return r[0].as<std::string>(); }, match_id);
}

}  // namespace ply::lobby
