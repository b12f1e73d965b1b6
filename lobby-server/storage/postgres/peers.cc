// PostgresStore's side of several lobby instances: announcements (NOTIFY ply_matches) and
// the listener that hears them, match ownership as advisory locks on a connection of its
// own, the claim of orphaned matches, and the record of bot requests that counts duplicates.
#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lobby-server/storage/postgres/internal.h"

namespace ply::lobby {
namespace pg {

// The statements of announcements, ownership and bot requests.
const StatementList& PeerStatements() {
  static const StatementList statements = {
      {"notify", "SELECT pg_notify('ply_matches', $1)"},
      // Ownership is a session-level advisory lock per match, held on the owner connection: it
      // dies with the connection, so a killed instance's matches are free at once.
      {"own", "SELECT pg_try_advisory_lock($1::bigint)"},
      {"disown", "SELECT pg_advisory_unlock($1::bigint)"},
      {"disown_all", "SELECT pg_advisory_unlock_all()"},
      {"give_back_turn",
       "UPDATE matches SET turn_started_ms = $3 WHERE id = $1 AND ply = $2 AND status = 2"
       " AND turn_started_ms < $3"},
      {"withdraw_bot_requests",
       "DELETE FROM bot_requests WHERE owner_pid = $1 AND owner_started = $2"},
      // Active matches with timed work (a clock, or a bot seat) whose lock nobody holds; the
      // candidates are picked (in random order, so that instances claiming at once spread the
      // matches) before any lock is tried, and only those are tried.
      {"claim_orphans",
       "WITH held AS MATERIALIZED ("
       "  SELECT (classid::bigint << 32) | objid::bigint AS key FROM pg_locks"
       "  WHERE locktype = 'advisory' AND objsubid = 1 AND granted),"
       " candidates AS MATERIALIZED ("
       "  SELECT m.id FROM matches m WHERE m.status = 2"
       "  AND (m.time_initial_ms IS NOT NULL OR EXISTS"
       "    (SELECT 1 FROM seats s WHERE s.match_id = m.id AND s.kind = 2))"
       "  AND ($1::bigint | m.id) NOT IN (SELECT key FROM held)"
       "  ORDER BY random() LIMIT $2::integer)"
       " SELECT id FROM candidates WHERE pg_try_advisory_lock($1::bigint | id)"},
      {"whoami",
       "SELECT pg_backend_pid(), backend_start::text FROM pg_stat_activity "
       "WHERE pid = pg_backend_pid()"},
      {"peers",
       "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ply-lobby' "
       "AND pid <> $1::integer"},
      // The previous request for this ply counts as a duplicate only when it came from another
      // instance whose owner connection is still alive.
      {"record_bot_request",
       "WITH gone AS (DELETE FROM bot_requests WHERE match_id = $1 AND ply < $2),"
       " up AS ("
       "  INSERT INTO bot_requests (match_id, ply, owner_pid, owner_started, asked_ms)"
       "  VALUES ($1, $2, $3, $4, $5) ON CONFLICT (match_id, ply) DO UPDATE"
       "  SET owner_pid = EXCLUDED.owner_pid, owner_started = EXCLUDED.owner_started,"
       "    asked_ms = EXCLUDED.asked_ms, prev_pid = bot_requests.owner_pid,"
       "    prev_started = bot_requests.owner_started"
       "  RETURNING prev_pid, prev_started)"
       " SELECT EXISTS (SELECT 1 FROM up p JOIN pg_stat_activity a ON a.pid = p.prev_pid"
       "  AND a.backend_start::text = p.prev_started"
       "  WHERE NOT (p.prev_pid = $3 AND p.prev_started = $4))"},
  };
  return statements;
}

}  // namespace pg

namespace {

// Advisory lock keys of match ownership: the match id with bit 62 set, apart from the
// migration lock and anything else that uses small keys.
constexpr int64_t kOwnerKey = int64_t{1} << 62;
// A NOTIFY payload is at most 8000 bytes.
constexpr size_t kMaxPayload = 7000;

}  // namespace

void PostgresStore::Announce(const std::vector<MatchChange>& changes) {
  std::string payload;
  for (const MatchChange& c : changes) {
    if (payload.size() > kMaxPayload) {
      Announce(payload);
      payload.clear();
    }
    absl::StrAppend(&payload, payload.empty() ? "" : ",", c.match_id, ":", c.ply, ":", c.time_ms);
  }
  if (!payload.empty()) Announce(payload);
}

void PostgresStore::Announce(const std::string& what) {
  if (!listening_) return;
  std::deque<std::string> payloads;
  {
    // What could not be sent before goes first, so that no other instance misses a change
    // (its watchers would wait for a move, or an end, forever).
    std::lock_guard<std::mutex> lock(unsent_mu_);
    payloads.swap(unsent_);
  }
  if (!what.empty()) payloads.push_back(absl::StrCat(origin_, "|", what));
  if (payloads.empty()) return;
  size_t sent = 0;
  absl::Status s = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    for (; sent < payloads.size(); ++sent) tx.exec_prepared("notify", payloads[sent]);
    return absl::OkStatus();
  });
  if (s.ok()) return;
  db_errors_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(unsent_mu_);
  for (size_t i = sent; i < payloads.size(); ++i) unsent_.push_back(std::move(payloads[i]));
  // Bounded: past this a peer's resync (or its version checks) has to do.
  while (unsent_.size() > 1000) unsent_.pop_front();
}

absl::Status PostgresStore::StartPeers(PeerHandlers handlers) {
  if (listening_.exchange(true)) return absl::FailedPreconditionError("already listening");
  {
    std::lock_guard<std::mutex> lock(handlers_mu_);
    handlers_ = std::move(handlers);
  }
  std::promise<absl::Status> first;
  std::future<absl::Status> listening = first.get_future();
  listener_ = std::thread([this, first = std::move(first)]() mutable { Listen(&first); });
  absl::Status s = listening.get();
  if (s.ok()) Announce("hello");
  return s;
}

void PostgresStore::StopPeers() {
  std::lock_guard<std::mutex> lock(handlers_mu_);
  handlers_ = {};
}

void PostgresStore::Tell(const std::function<void(const PeerHandlers&)>& call) {
  std::lock_guard<std::mutex> lock(handlers_mu_);
  call(handlers_);
}

void PostgresStore::Listen(std::promise<absl::Status>* first) {
  // Hears ply_matches on the connection it was made with.
  class Receiver final : public pqxx::notification_receiver {
   public:
    Receiver(pqxx::connection_base& c, PostgresStore* store)
        : pqxx::notification_receiver(c, "ply_matches"), store_(store) {}
    void operator()(const std::string& payload, int) override { store_->Heard(payload); }

   private:
    PostgresStore* store_;
  };
  int backoff_ms = 100;
  bool connected_before = false;
  while (listening_) {
    try {
      std::unique_ptr<Connection> conn = Connect("ply-lobby");
      Receiver receiver(conn->c, this);
      // The LISTEN is issued when the receiver registers; from here nothing is missed.
      listener_pid_ = conn->c.backendpid();
      if (first != nullptr) {
        first->set_value(absl::OkStatus());
        first = nullptr;
      }
      if (connected_before) {
        listen_reconnects_.fetch_add(1, std::memory_order_relaxed);
        // Whatever was announced while this connection was down is lost: catch up.
        Tell([](const PeerHandlers& h) {
          if (h.resync) h.resync();
        });
      }
      connected_before = true;
      backoff_ms = 100;
      while (listening_) conn->c.await_notification(0, 200000);
    } catch (const std::exception& e) {
      db_errors_.fetch_add(1, std::memory_order_relaxed);
      if (first != nullptr) {
        first->set_value(absl::UnavailableError(
            absl::StrCat("cannot listen for other lobby instances: ", e.what())));
        first = nullptr;
        listening_ = false;
        return;
      }
      std::fprintf(stderr, "ply-lobby: listening for other instances: %s (retrying)\n", e.what());
      for (int waited = 0; waited < backoff_ms && listening_; waited += 50) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      backoff_ms = std::min(backoff_ms * 2, 2000);
    }
  }
}

void PostgresStore::Heard(const std::string& payload) {
  notifications_.fetch_add(1, std::memory_order_relaxed);
  const size_t bar = payload.find('|');
  if (bar == std::string::npos || payload.compare(0, bar, origin_) == 0) return;
  const absl::string_view what = absl::string_view(payload).substr(bar + 1);
  if (what == "released") {
    Tell([](const PeerHandlers& h) {
      if (h.released) h.released();
    });
    return;
  }
  std::vector<MatchChange> changes;
  if (what != "hello") {
    for (absl::string_view item : absl::StrSplit(what, ',')) {
      std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
      MatchChange c;
      if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &c.match_id) ||
          !absl::SimpleAtoi(parts[1], &c.ply) || !absl::SimpleAtoi(parts[2], &c.time_ms)) {
        continue;
      }
      changes.push_back(c);
    }
  }
  // An empty list is a new instance saying hello.
  Tell([&](const PeerHandlers& h) {
    if (h.changed) h.changed(changes);
  });
}

absl::Status PostgresStore::WithOwner(const std::function<absl::Status(Connection&)>& work) {
  absl::Status result;
  int64_t lost_epoch = 0;
  {
    std::lock_guard<std::mutex> lock(owner_mu_);
    // The lobby is leaving: no new ownership may outlive DisownAll.
    if (owner_closed_) return absl::UnavailableError("this lobby instance is leaving");
    try {
      if (owner_ == nullptr) {
        owner_ = Connect("ply-lobby-owner");
        pqxx::nontransaction tx(owner_->c);
        // The claim query's plan is cheap to make and its cost estimate high: JIT compiling it
        // took longer than running it.
        tx.exec("SET jit = off");
        pqxx::row me = tx.exec_prepared1("whoami");
        owner_pid_ = me[0].as<int>();
        owner_started_ = me[1].as<std::string>();
      }
      result = work(*owner_);
    } catch (const std::exception& e) {
      db_errors_.fetch_add(1, std::memory_order_relaxed);
      const bool broken =
          owner_ != nullptr &&
          (!owner_->c.is_open() || dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr);
      if (broken) {
        // Every lock died with the connection.
        owner_ = nullptr;
        held_.clear();
        lost_epoch = owner_epoch_.fetch_add(1);
      }
      result = absl::UnavailableError(absl::StrCat("the database is unavailable: ", e.what()));
    }
  }
  // Outside owner_mu_: the handler is not to call back into the store, but must not wait for it.
  if (lost_epoch != 0) {
    Tell([lost_epoch](const PeerHandlers& h) {
      if (h.ownership_lost) h.ownership_lost(lost_epoch);
    });
  }
  return result;
}

absl::StatusOr<int> PostgresStore::Peers() {
  // Called every claim interval: a good moment to send what could not be sent before.
  Announce("");
  int peers = 0;
  absl::Status s = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    peers = tx.exec_prepared1("peers", listener_pid_.load())[0].as<int>();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return peers;
}

absl::StatusOr<bool> PostgresStore::Own(int64_t match_id) {
  bool owned = false;
  absl::Status s = WithOwner([&](Connection& conn) {
    // A lock this session holds already (a claim got there first) is not taken again: session
    // locks stack, and the one Disown would leave held forever.
    if (held_.contains(match_id)) {
      owned = true;
      return absl::OkStatus();
    }
    pqxx::nontransaction tx(conn.c);
    owned = tx.exec_prepared1("own", kOwnerKey | match_id)[0].as<bool>();
    if (owned) held_.insert(match_id);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return owned;
}

void PostgresStore::Disown(int64_t match_id) {
  (void)WithOwner([&](Connection& conn) {
    if (held_.erase(match_id) == 0) return absl::OkStatus();
    pqxx::nontransaction tx(conn.c);
    tx.exec_prepared1("disown", kOwnerKey | match_id);
    return absl::OkStatus();
  });
}

void PostgresStore::DisownAll() {
  absl::Status s = WithOwner([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    // The lobby cancelled its bot calls first: those requests are withdrawn, so the next
    // owner asking for the same plies is no duplicate.
    tx.exec_prepared("withdraw_bot_requests", owner_pid_, owner_started_);
    tx.exec_prepared("disown_all");
    return absl::OkStatus();
  });
  {
    // Closed rather than kept, and for good: nothing of this instance's ownership outlives the
    // call, and no claim after it takes any.
    std::lock_guard<std::mutex> lock(owner_mu_);
    owner_ = nullptr;
    held_.clear();
    owner_closed_ = true;
  }
  if (s.ok()) Announce("released");
}

absl::StatusOr<std::vector<int64_t>> PostgresStore::ClaimOrphans(int limit) {
  std::vector<int64_t> ids;
  absl::Status s = WithOwner([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    for (const pqxx::row& r : tx.exec_prepared("claim_orphans", kOwnerKey, limit)) {
      ids.push_back(r[0].as<int64_t>());
      held_.insert(ids.back());
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return ids;
}

absl::Status PostgresStore::GiveBackTurn(int64_t match_id, int ply, int64_t turn_started_ms) {
  absl::Status s = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    tx.exec_prepared("give_back_turn", match_id, ply, turn_started_ms);
    return absl::OkStatus();
  });
  if (s.ok()) Announce({{.match_id = match_id, .ply = ply, .time_ms = pg::NowMs()}});
  return s;
}

absl::StatusOr<bool> PostgresStore::RecordBotRequest(int64_t match_id, int ply) {
  int pid = 0;
  std::string started;
  {
    std::lock_guard<std::mutex> lock(owner_mu_);
    pid = owner_pid_;
    started = owner_started_;
  }
  bool duplicate = false;
  absl::Status s = WithConnection([&](Connection& conn) {
    pqxx::nontransaction tx(conn.c);
    duplicate = tx.exec_prepared1("record_bot_request", match_id, ply, pid, started, pg::NowMs())[0]
                    .as<bool>();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return duplicate;
}

}  // namespace ply::lobby
