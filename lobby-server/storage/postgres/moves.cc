// PostgresStore's moves, group-committed: AppendMove and AppendMoveAsync queue a move, and
// writer threads commit the queued moves of distinct matches in one statement; a move that ends
// a match (it moves the ratings too), or a batch one bad move failed, commits on its own.
#include <algorithm>
#include <future>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lobby-server/storage/postgres/internal.h"

namespace ply::lobby {
namespace pg {

// The statements that append moves.
const StatementList& MoveStatements() {
  static const StatementList statements = {
      // Moves of distinct matches in one statement (one round trip), from a JSON array of
      // MoveRow objects: a match advances only if it is still active at the previous ply, and
      // its move row and the mover's clock are written only if it did. Returns the ids of the
      // matches that advanced (the others were no longer active at the previous ply).
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
      // What the database holds at a move's ply: the match's ply and status, and the move row
      // at that ply if there is one (Settle reads back a commit whose outcome is unknown).
      {"move_at",
       "SELECT m.ply, m.status, mv.seat, mv.move, mv.time_ms FROM matches m"
       " LEFT JOIN moves mv ON mv.match_id = m.id AND mv.ply = $2 WHERE m.id = $1"},
  };
  return statements;
}

// One move as append_moves reads it (the batch's column names, one place for all 16).
nlohmann::json MoveRow(int64_t match_id, const MoveCommit& c) {
  const MatchResult result = c.result.value_or(MatchResult{});
  return {{"m", match_id},
          {"p", c.move.ply},
          {"ts", c.turn_started_ms},
          {"d", c.draw_offer},
          {"st",
           static_cast<int>(c.result.has_value() ? MatchStatus::kFinished : MatchStatus::kActive)},
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
          {"c", c.clocked}};
}

}  // namespace pg

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
    // Moves that failed for want of the database (it is restarting or failing over, or the
    // connection broke during the commit): read back and, if not stored, write again, for a
    // while, so that the answer is the truth.
    const absl::Time settle_by = absl::Now() + options_.settle_window;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (absl::IsUnavailable(results[i])) {
        results[i] = Settle(batch[i].match_id, batch[i].commit, results[i], settle_by);
      }
    }
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
  for (const PendingAppend& p : batch) rows.push_back(pg::MoveRow(p.match_id, p.commit));
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
      results[i] = MatchMovedOn(batch[i].match_id, batch[i].commit.move.ply - 1);
    }
  }
  return results;
}

absl::Status PostgresStore::AppendOne(int64_t match_id, const MoveCommit& commit) {
  return WithConnection([&](Connection& conn) {
    pqxx::work tx(conn.c);
    pqxx::result r = tx.exec_prepared(
        "append_moves", pg::Dump(nlohmann::json::array({pg::MoveRow(match_id, commit)})));
    if (r.empty()) return MatchMovedOn(match_id, commit.move.ply - 1);
    if (commit.result) pg::RateMatch(tx, match_id, *commit.result, commit.move.ply);
    tx.commit();
    return absl::OkStatus();
  });
}

absl::Status PostgresStore::Settle(int64_t match_id, const MoveCommit& commit, absl::Status failure,
                                   absl::Time deadline) {
  absl::Duration pause = absl::Milliseconds(50);
  int64_t attempts = 0;
  while (absl::IsUnavailable(failure) && absl::Now() < deadline) {
    absl::SleepFor(std::min(pause, std::max(absl::ZeroDuration(), deadline - absl::Now())));
    pause = std::min(pause * 2, absl::Milliseconds(500));
    ++attempts;
    enum class Found { kLanded, kNotYet, kMovedOn } found = Found::kNotYet;
    absl::Status read = WithConnection([&](Connection& conn) {
      pqxx::nontransaction tx(conn.c);
      pqxx::result r = tx.exec_prepared("move_at", match_id, commit.move.ply);
      if (r.empty()) {
        found = Found::kMovedOn;
        return absl::OkStatus();
      }
      const pqxx::row row = r[0];
      if (!row[2].is_null() && row[2].as<int>() == commit.move.seat &&
          row[3].as<std::string>() == commit.move.move &&
          row[4].as<int64_t>() == commit.move.time_ms) {
        found = Found::kLanded;
      } else if (row[0].as<int>() == commit.move.ply - 1 &&
                 row[1].as<int>() == static_cast<int>(MatchStatus::kActive)) {
        found = Found::kNotYet;
      } else {
        found = Found::kMovedOn;
      }
      return absl::OkStatus();
    });
    if (absl::IsUnavailable(read)) continue;
    if (!read.ok()) break;
    if (found == Found::kLanded) {
      settled_moves_.fetch_add(1, std::memory_order_relaxed);
      return absl::OkStatus();
    }
    if (found == Found::kMovedOn) return MatchMovedOn(match_id, commit.move.ply - 1);
    // Not stored, and the database answers: write it again (the expected ply keeps a second
    // copy out, whoever wrote first).
    failure = AppendOne(match_id, commit);
    if (failure.ok()) settled_moves_.fetch_add(1, std::memory_order_relaxed);
  }
  if (absl::IsUnavailable(failure) && attempts > 0) {
    // Still unknown: the caller may send the move again; a move already stored is answered as
    // played (Lobby::MakeMove), so the answer is the truth either way.
    return absl::UnavailableError(
        "the database did not answer in time, so whether the move was stored is not known: "
        "send it again (a move already stored is answered as played)");
  }
  return failure;
}

}  // namespace ply::lobby
