// ply-lobby: the lobby service. Owns matches and keeps them in PostgreSQL; asks ply-bot for bot
// moves. Several instances may share one database (any serves any call; see lobby.h). Prints
// "ply-lobby listening on HOST:PORT" on stdout once it serves (with --port=0 the system chooses
// the port); logs on stderr. On SIGTERM or SIGINT it drains: reports NOT_SERVING, hands its
// matches to the other instances at once, closes watch streams with UNAVAILABLE (clients
// reconnect elsewhere), finishes the calls in flight and exits; every acknowledged move is
// committed.
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bot-service/bot_client.h"
#include "common/credentials.h"
#include "common/flag_check.h"
#include "common/grpc_server.h"
#include "common/log_text.h"
#include "common/metrics_http.h"
#include "engine/core/flags_usage.h"
#include "lobby-server/executor.h"
#include "lobby-server/lobby.h"
#include "lobby-server/lobby_service.h"
#include "lobby-server/storage/postgres/postgres_store.h"

ABSL_FLAG(std::string, host, "127.0.0.1",
          "Address to listen on: loopback unless told otherwise (0.0.0.0 for every interface, as "
          "in a container; then serve TLS with --tls_cert or put a TLS proxy in front).");
ABSL_FLAG(int, port, 50050, "Port to listen on; 0 lets the system choose a free one.");
ABSL_FLAG(std::string, database_url, "",
          "PostgreSQL connection string or URI. Empty: the PLY_DATABASE_URL environment variable "
          "(where secrets such as a password belong), else "
          "\"host=127.0.0.1 port=5432 dbname=ply user=postgres\".");
ABSL_FLAG(int, db_connections, 8,
          "Database connections kept open at most for calls; each --db_writers thread adds one.");
ABSL_FLAG(int, db_writers, 2,
          "Threads that commit moves, each many matches' queued moves in one statement.");
ABSL_FLAG(int, db_wait_s, 30,
          "At start, how long to wait for the database to accept connections before giving up.");
ABSL_FLAG(int, db_settle_ms, 5000,
          "A move whose commit failed for want of the database (a restart, a failover to a "
          "standby, a connection broken during the commit) is read back and written again for "
          "this long before the player is told to send it again.");
ABSL_FLAG(std::string, bot_target, "",
          "ply-bot instances: host:port, ipv4:A:P,B:P, dns:///name:port, or file:PATH (a list "
          "of host:port re-read every second). Empty: no bot seats.");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate (chain) to serve TLS with; empty: plaintext.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA that clients' certificates must chain to (mutual TLS); empty: any client.");
ABSL_FLAG(std::string, bot_tls_ca, "",
          "PEM CA that ply-bot instances' certificates must chain to; empty: plaintext to bots.");
ABSL_FLAG(std::string, bot_tls_cert, "",
          "PEM certificate the lobby presents to ply-bot (mutual TLS), with --bot_tls_key.");
ABSL_FLAG(std::string, bot_tls_key, "", "PEM private key of --bot_tls_cert.");
ABSL_FLAG(std::string, bot_token_file, "",
          "File holding the token ply-bot instances require (their --auth_token_file), sent "
          "with every bot call; empty: none.");
ABSL_FLAG(int64_t, bot_pacing_ms, 500,
          "Default minimum time before a bot moves, so people can follow (0: as fast as they go).");
ABSL_FLAG(int64_t, bot_deadline_margin_ms, 1000,
          "A bot call's deadline is its search budget plus this: time for the reply, and for "
          "waiting in a busy instance's queue.");
ABSL_FLAG(int, bot_give_up_s, 600,
          "A bot seat that gets no move for this long (and has no clock to lose on) forfeits.");
ABSL_FLAG(int, threads, 8, "Threads for database work and match logic.");
ABSL_FLAG(int, max_queued_calls, 10000,
          "Calls that may wait for a thread; past that RESOURCE_EXHAUSTED.");
ABSL_FLAG(double, client_calls_per_s, 500,
          "Calls per second one client (IP address) may make, sustained; beyond: "
          "RESOURCE_EXHAUSTED. 0: no limit.");
ABSL_FLAG(double, client_burst, 1000, "Calls one client may make at once above its rate.");
ABSL_FLAG(int, client_streams, 100,
          "WatchMatch and Pair streams one client may have open; 0: no limit.");
ABSL_FLAG(std::vector<std::string>, client_limit_exempt, {},
          "Client addresses the per-client limits do not apply to (comma-separated).");
ABSL_FLAG(std::vector<std::string>, trusted_proxies, {},
          "Load balancers or proxies (addresses or prefixes such as 10.0.0.0/8) whose "
          "x-forwarded-for names the client for the per-client limits; others' is ignored.");
ABSL_FLAG(std::string, proxy_token_file, "",
          "A file with the secret ply-web sends (its own --proxy_token_file): a caller that "
          "sends it is a trusted proxy whatever its address (its x-forwarded-for names the "
          "client), and its calls without one (its shared match feeds) are not limited.");
ABSL_FLAG(int64_t, clock_event_ms, 10000,
          "Interval of ClockUpdate events to watchers of matches with clocks; 0: none.");
ABSL_FLAG(int, match_cache, 2000,
          "Finished matches kept in memory (beyond those in play or watched) for quick reads.");
ABSL_FLAG(int, metrics_port, -1,
          "Port of the Prometheus text endpoint (GET /metrics); 0 picks a free one, -1 turns it "
          "off.");
ABSL_FLAG(std::string, metrics_host, "127.0.0.1",
          "Address the metrics endpoint listens on, apart from the players' port: loopback unless "
          "a scraper elsewhere needs it (0.0.0.0 in a pod).");
ABSL_FLAG(int64_t, claim_ms, 500,
          "How often to look for matches no lobby instance drives (their owner died), in ms.");
ABSL_FLAG(int, drain_s, 5, "On SIGTERM, how long calls in flight may take to finish.");
ABSL_FLAG(int64_t, max_connection_age_ms, 120000,
          "Client connections are recycled after this long (streams on them go on), so that "
          "round-robin clients spread over new lobby instances; 0: never.");
ABSL_FLAG(int64_t, max_connection_idle_ms, 30000,
          "Client connections with no call (no stream) for this long are closed (a client "
          "reconnects on its next call), so connections left open and unused, or opened and "
          "never used, do not hold memory and file descriptors; 0: never.");
ABSL_FLAG(int, max_concurrent_streams, 1000,
          "Calls open at once on one client connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS); "
          "a gRPC client waits for a free one, a peer that ignores it loses the connection, so "
          "one connection cannot hold "
          "unbounded memory (about 12 KB a call); 0: no bound.");
ABSL_FLAG(int, max_bot_seats, 256,
          "Bot seats in play at once over all clients; a new match past it is refused "
          "(RESOURCE_EXHAUSTED). Size it to the bots' cores (deploy/README.md). 0: no limit.");
ABSL_FLAG(int, client_bot_seats, 8,
          "Bot seats one client may have in matches it created that are waiting or in play.");
ABSL_FLAG(int, client_bot_matches, 2, "Bot-vs-bot matches one client may run at once.");
ABSL_FLAG(int, client_waiting_matches, 10,
          "Matches one client may have waiting for players at once.");
ABSL_FLAG(int, client_open_matches, 20,
          "Matches one client may have created that are waiting or in play, of every kind (each "
          "match in play with a clock or a bot holds a lock in PostgreSQL's shared lock table, "
          "which one client could otherwise fill for everyone).");
ABSL_FLAG(int, address_quota_multiple, 4,
          "The client quotas apply per player and per address, whichever is reached first: an "
          "address may hold this many times a player's (players behind one NAT share it).");
ABSL_FLAG(int, client_registrations_per_hour, 10,
          "Players one address (an IPv6 /64) may register in an hour, over every instance; "
          "0: no bound. Exempt clients are not bounded.");
ABSL_FLAG(int, waiting_expiry_s, 1800,
          "A match nobody joins within this is cancelled (no result); 0: never.");
ABSL_FLAG(double, claim_after_s, 120,
          "An untimed match whose side to move has been gone this long (no open stream of its "
          "seat, no call; counted from when it was last seen or its turn began) may be claimed "
          "by the opponent, as a win or a draw; 0: never.");
ABSL_FLAG(double, abandon_after_s, 300,
          "A match against a bot (timed or not) whose person has been gone this long on their move "
          "(no open stream, no call) ends by rule: a loss when rated, no result when casual; "
          "0: never.");
ABSL_FLAG(double, max_turn_s, 1800,
          "A match whose side to move, a person, has spent this long on one move ends as if "
          "they had gone, even while they are connected: against a bot by rule (as "
          "--abandon_after_s, timed or not), in an untimed match against a person by the "
          "opponent's claim; 0: never.");
ABSL_FLAG(double, abort_after_s, 120,
          "A match whose side to move is a person that has not made its first move this long "
          "after its turn began is aborted (no result, no rating change); 0: never.");
ABSL_FLAG(double, no_show_after_s, 15,
          "A match made by quick pairing whose game has not begun is aborted (no result) when "
          "one of its players has not come to it (no stream, no call with the seat's token) "
          "this long after the pairing; 0: never.");
ABSL_FLAG(double, no_show_cooldown_s, 60,
          "A player who did not come to a paired match may not pair again for this long, "
          "doubled for each further no-show in the last day (at most an hour); 0: no wait.");
ABSL_FLAG(double, paired_first_move_s, 30,
          "In a match made by quick pairing, a player who has not made their first move this "
          "long into their turn has the match aborted (no result) and waits before pairing "
          "again as one who did not come; 0: only --abort_after_s applies.");
ABSL_FLAG(double, reclaim_clock_floor_s, 15,
          "A timed match claimed from an instance that died or stopped gives its side to move "
          "at least this much of the time it had when its turn began (nobody could move while "
          "no instance served it); 0: nothing given back.");
ABSL_FLAG(double, presence_grace_s, 5,
          "A player whose last stream closed (or who last called) within this still counts as "
          "present, so a quick reconnection is not announced.");
ABSL_FLAG(double, presence_poll_s, 1,
          "How often the presence of the watched matches is looked at (and sightings written).");
ABSL_FLAG(double, presence_beat_s, 10,
          "How often this instance marks its open streams alive; the streams of an instance "
          "silent for three beats (it died) no longer count.");
ABSL_FLAG(int64_t, bot_vs_bot_min_pacing_ms, 250,
          "Bots of a match without people move no sooner than this after the position arose.");
ABSL_FLAG(int64_t, bot_vs_bot_budget_ms, 1000,
          "A bot of a match without people searches at most this long a move (0: the level's "
          "own time), so that bot-vs-bot matches cannot hold the bots' cores.");
ABSL_FLAG(int, client_bot_calls, 2,
          "Moves asked of the bots at once for one client's games against people (its timed "
          "games first; the rest wait in the lobby), so that no client fills the bots' places "
          "for people; 0: no bound.");
ABSL_FLAG(int, network_bot_calls, 4,
          "Moves asked of the bots at once for the games against people of all the clients of "
          "one network (as the quotas group addresses: players are cheap to register); 0: no "
          "bound.");
ABSL_FLAG(double, pair_bot_after_s, 20,
          "Quick pairing: after this long without an opponent, offer the nearest bot level.");
ABSL_FLAG(double, pair_base_gap, 50,
          "Quick pairing: the rating gap accepted at first; it widens by --pair_gap_per_s each "
          "second of waiting, up to --pair_max_gap.");
ABSL_FLAG(double, pair_gap_per_s, 10, "Quick pairing: how fast the accepted gap widens.");
ABSL_FLAG(double, pair_max_gap, 400, "Quick pairing: the widest gap accepted.");
ABSL_FLAG(int64_t, analysis_ms, 1000,
          "Post-game analysis: the bots' time to judge each position, in milliseconds.");
ABSL_FLAG(int, analysis_depth, 0,
          "Post-game analysis: the search depth cap per position (0: the time alone limits it).");
ABSL_FLAG(int64_t, analysis_nodes, 0,
          "Post-game analysis: the node budget per position (0: the time alone limits it); with "
          "an --analysis_ms that never runs out first, how far each position is judged does not "
          "depend on the bots' speed or load.");
ABSL_FLAG(int, analysis_parallel, 4,
          "Post-game analysis: positions of one match judged at once, spread over the bots.");
ABSL_FLAG(int, analysis_max_running, 4,
          "Post-game analyses this instance runs at once; more wait their turn in a queue.");
ABSL_FLAG(int, analysis_max_queued, 64,
          "Post-game analyses that may wait for a place; beyond them requests are refused.");
ABSL_FLAG(int, analysis_client_in_flight, 2,
          "Post-game analyses one client (address; player) may have running or waiting at once "
          "(0: no limit). Stored analyses are always served.");
ABSL_FLAG(int, analysis_client_per_hour, 30,
          "Post-game analyses one client (address; player) may start in an hour (0: no limit).");
ABSL_FLAG(int, analysis_kept_matches, 256,
          "Matches whose judged positions are kept in memory, so that a spectator following a bot "
          "match, and the analysis once it is over, judge only the positions played since.");
ABSL_FLAG(int, watcher_queue, 1024,
          "Events a WatchMatch stream may have unsent before it is dropped as too slow.");

namespace ply::lobby {
namespace {

// Every numeric flag, checked before anything starts (the database included): a value out of
// range is a sentence and exit 2. Before, some were clamped without a word (--analysis_parallel=0
// ran 1) and others started a lobby that broke its own rules (--claim_after_s=-5 let a claim
// come at once, --threads=0 served no call).
absl::Status CheckNumericFlags() {
  constexpr double kDay = 86400;
  constexpr double kYear = 365 * kDay;
  return CheckFlagRanges({
      PLY_FLAG_RANGE(port, 0, 65535, "0 picks a free port"),
      PLY_FLAG_RANGE(db_connections, 1, 1000),
      PLY_FLAG_RANGE(db_writers, 1, 64),
      PLY_FLAG_RANGE(db_wait_s, 0, kDay),
      PLY_FLAG_RANGE(db_settle_ms, 0, 3600e3),
      PLY_FLAG_RANGE(bot_pacing_ms, 0, 600e3),
      PLY_FLAG_RANGE(bot_deadline_margin_ms, 0, 3600e3),
      PLY_FLAG_RANGE(bot_give_up_s, 1, kYear),
      PLY_FLAG_RANGE(threads, 1, 4096),
      PLY_FLAG_RANGE(max_queued_calls, 1, 1e8),
      PLY_FLAG_RANGE(client_calls_per_s, 0, 1e9, "0 means no limit"),
      PLY_FLAG_RANGE(client_burst, 0, 1e9),
      PLY_FLAG_RANGE(client_streams, 0, 1e8, "0 means no limit"),
      PLY_FLAG_RANGE(clock_event_ms, 0, 3600e3, "0 means none"),
      PLY_FLAG_RANGE(match_cache, 0, 1e8),
      PLY_FLAG_RANGE(metrics_port, -1, 65535, "-1 turns it off, 0 picks a free port"),
      PLY_FLAG_RANGE(claim_ms, 10, 3600e3),
      PLY_FLAG_RANGE(drain_s, 0, 3600),
      PLY_FLAG_RANGE(max_connection_age_ms, 0, 1e12, "0 means never"),
      PLY_FLAG_RANGE(max_connection_idle_ms, 0, 1e12, "0 means never"),
      PLY_FLAG_RANGE(max_concurrent_streams, 0, 1 << 30, "0 means no bound"),
      PLY_FLAG_RANGE(max_bot_seats, 0, 1e8, "0 means no limit"),
      PLY_FLAG_RANGE(client_bot_seats, 0, 1e6),
      PLY_FLAG_RANGE(client_bot_matches, 0, 1e6),
      PLY_FLAG_RANGE(client_waiting_matches, 0, 1e6),
      PLY_FLAG_RANGE(client_open_matches, 0, 1e6),
      PLY_FLAG_RANGE(address_quota_multiple, 1, 1e4),
      PLY_FLAG_RANGE(client_registrations_per_hour, 0, 1e8, "0 means no bound"),
      PLY_FLAG_RANGE(waiting_expiry_s, 0, kYear, "0 means never"),
      PLY_FLAG_RANGE(claim_after_s, 0, kYear, "0 means never"),
      PLY_FLAG_RANGE(abandon_after_s, 0, kYear, "0 means never"),
      PLY_FLAG_RANGE(max_turn_s, 0, kYear, "0 means never"),
      PLY_FLAG_RANGE(abort_after_s, 0, kYear, "0 means never"),
      PLY_FLAG_RANGE(no_show_after_s, 0, kDay, "0 means never"),
      PLY_FLAG_RANGE(no_show_cooldown_s, 0, 3600, "0 means no wait"),
      PLY_FLAG_RANGE(paired_first_move_s, 0, kDay, "0 means only --abort_after_s"),
      PLY_FLAG_RANGE(reclaim_clock_floor_s, 0, kDay, "0 means nothing given back"),
      PLY_FLAG_RANGE(presence_grace_s, 0, kDay),
      PLY_FLAG_RANGE(presence_poll_s, 0.01, 3600),
      PLY_FLAG_RANGE(presence_beat_s, 0.1, 3600),
      PLY_FLAG_RANGE(bot_vs_bot_min_pacing_ms, 0, 600e3),
      PLY_FLAG_RANGE(bot_vs_bot_budget_ms, 0, 3600e3, "0 means the level's own time"),
      PLY_FLAG_RANGE(client_bot_calls, 0, 1e4, "0 means no bound"),
      PLY_FLAG_RANGE(network_bot_calls, 0, 1e4, "0 means no bound"),
      PLY_FLAG_RANGE(pair_bot_after_s, 0, kDay),
      PLY_FLAG_RANGE(pair_base_gap, 0, 1e4),
      PLY_FLAG_RANGE(pair_gap_per_s, 0, 1e4),
      PLY_FLAG_RANGE(pair_max_gap, 0, 1e4),
      PLY_FLAG_RANGE(analysis_ms, 1, 3600e3),
      PLY_FLAG_RANGE(analysis_depth, 0, 127, "0 means the time alone limits it"),
      PLY_FLAG_RANGE(analysis_nodes, 0, 1e15, "0 means the time alone limits it"),
      PLY_FLAG_RANGE(analysis_parallel, 1, 1024),
      PLY_FLAG_RANGE(analysis_max_running, 1, 1024),
      PLY_FLAG_RANGE(analysis_max_queued, 0, 1e6),
      PLY_FLAG_RANGE(analysis_client_in_flight, 0, 1e6, "0 means no limit"),
      PLY_FLAG_RANGE(analysis_client_per_hour, 0, 1e8, "0 means no limit"),
      PLY_FLAG_RANGE(analysis_kept_matches, 0, 1e6),
      PLY_FLAG_RANGE(watcher_queue, 1, 1e7),
  });
}

int Main() {
  // Debian's Abseil is built with Mutex deadlock detection on, which gRPC's locks pay for on
  // every acquisition (a lock graph kept per mutex): a check for debugging, not for serving.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Invalid UTF-8 in a request makes protobuf log a line per request: rate-limited, not raw.
  RouteProtobufLogs("ply-lobby");
  if (absl::Status flags = CheckNumericFlags(); !flags.ok()) {
    std::fprintf(stderr, "ply-lobby: %s\n", std::string(flags.message()).c_str());
    return 2;
  }
  const sigset_t signals = BlockStopSignals();

  std::string database_url = absl::GetFlag(FLAGS_database_url);
  if (database_url.empty()) {
    const char* env = std::getenv("PLY_DATABASE_URL");
    database_url =
        env != nullptr && *env != '\0' ? env : "host=127.0.0.1 port=5432 dbname=ply user=postgres";
  }
  PostgresStore store({.url = database_url,
                       .pool_size = absl::GetFlag(FLAGS_db_connections),
                       .append_writers = absl::GetFlag(FLAGS_db_writers),
                       .settle_window = absl::Milliseconds(absl::GetFlag(FLAGS_db_settle_ms))});
  const absl::Time db_deadline = absl::Now() + absl::Seconds(absl::GetFlag(FLAGS_db_wait_s));
  for (;;) {
    absl::Status migrated = store.Migrate();
    if (migrated.ok()) break;
    if (!absl::IsUnavailable(migrated) || absl::Now() > db_deadline) {
      std::fprintf(stderr, "ply-lobby: database: %s\n", std::string(migrated.message()).c_str());
      return 1;
    }
    absl::SleepFor(absl::Milliseconds(500));
  }

  std::unique_ptr<BotTargets> bots;
  if (const std::string target = absl::GetFlag(FLAGS_bot_target); !target.empty()) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> bot_credentials =
        MakeChannelCredentials({.ca_file = absl::GetFlag(FLAGS_bot_tls_ca),
                                .cert_file = absl::GetFlag(FLAGS_bot_tls_cert),
                                .key_file = absl::GetFlag(FLAGS_bot_tls_key)});
    if (!bot_credentials.ok()) {
      std::fprintf(stderr, "ply-lobby: bot TLS: %s\n",
                   std::string(bot_credentials.status().message()).c_str());
      return 2;
    }
    absl::StatusOr<std::string> bot_token = ReadTokenFile(absl::GetFlag(FLAGS_bot_token_file));
    if (!bot_token.ok()) {
      std::fprintf(stderr, "ply-lobby: --bot_token_file: %s\n",
                   std::string(bot_token.status().message()).c_str());
      return 2;
    }
    absl::StatusOr<std::unique_ptr<BotTargets>> made =
        BotTargets::Create(target, *bot_credentials, *std::move(bot_token));
    if (!made.ok()) {
      std::fprintf(stderr, "ply-lobby: --bot_target: %s\n",
                   std::string(made.status().message()).c_str());
      return 1;
    }
    bots = *std::move(made);
  }
  Executor executor(absl::GetFlag(FLAGS_threads), absl::GetFlag(FLAGS_max_queued_calls));
  Lobby lobby(&store, bots.get(), &executor,
              {.default_bot_pacing_ms = absl::GetFlag(FLAGS_bot_pacing_ms),
               .bot_deadline_margin_ms = absl::GetFlag(FLAGS_bot_deadline_margin_ms),
               .bot_give_up_after = absl::Seconds(absl::GetFlag(FLAGS_bot_give_up_s)),
               .watcher_queue = absl::GetFlag(FLAGS_watcher_queue),
               .clock_event_interval = absl::Milliseconds(absl::GetFlag(FLAGS_clock_event_ms)),
               .cache_size = static_cast<size_t>(absl::GetFlag(FLAGS_match_cache)),
               .claim_interval = absl::Milliseconds(absl::GetFlag(FLAGS_claim_ms)),
               .pair_base_gap = absl::GetFlag(FLAGS_pair_base_gap),
               .pair_gap_per_s = absl::GetFlag(FLAGS_pair_gap_per_s),
               .pair_max_gap = absl::GetFlag(FLAGS_pair_max_gap),
               .pair_bot_after = absl::Seconds(absl::GetFlag(FLAGS_pair_bot_after_s)),
               .max_bot_seats = absl::GetFlag(FLAGS_max_bot_seats),
               .client_bot_seats = absl::GetFlag(FLAGS_client_bot_seats),
               .client_bot_matches = absl::GetFlag(FLAGS_client_bot_matches),
               .client_waiting_matches = absl::GetFlag(FLAGS_client_waiting_matches),
               .client_open_matches = absl::GetFlag(FLAGS_client_open_matches),
               .address_quota_multiple = absl::GetFlag(FLAGS_address_quota_multiple),
               .client_registrations_per_hour = absl::GetFlag(FLAGS_client_registrations_per_hour),
               .waiting_expiry = absl::Seconds(absl::GetFlag(FLAGS_waiting_expiry_s)),
               .bot_vs_bot_min_pacing_ms = absl::GetFlag(FLAGS_bot_vs_bot_min_pacing_ms),
               .bot_vs_bot_budget_ms = absl::GetFlag(FLAGS_bot_vs_bot_budget_ms),
               .client_bot_calls = absl::GetFlag(FLAGS_client_bot_calls),
               .network_bot_calls = absl::GetFlag(FLAGS_network_bot_calls),
               .claim_after = absl::Seconds(absl::GetFlag(FLAGS_claim_after_s)),
               .abort_after = absl::Seconds(absl::GetFlag(FLAGS_abort_after_s)),
               .no_show_after = absl::Seconds(absl::GetFlag(FLAGS_no_show_after_s)),
               .no_show_cooldown = absl::Seconds(absl::GetFlag(FLAGS_no_show_cooldown_s)),
               .paired_first_move = absl::Seconds(absl::GetFlag(FLAGS_paired_first_move_s)),
               .reclaim_clock_floor = absl::Seconds(absl::GetFlag(FLAGS_reclaim_clock_floor_s)),
               .abandon_after = absl::Seconds(absl::GetFlag(FLAGS_abandon_after_s)),
               .max_turn = absl::Seconds(absl::GetFlag(FLAGS_max_turn_s)),
               .presence_grace = absl::Seconds(absl::GetFlag(FLAGS_presence_grace_s)),
               .presence_poll = absl::Seconds(absl::GetFlag(FLAGS_presence_poll_s)),
               .presence_beat = absl::Seconds(absl::GetFlag(FLAGS_presence_beat_s))});
  if (absl::Status resumed = lobby.Resume(); !resumed.ok()) {
    std::fprintf(stderr, "ply-lobby: resuming matches: %s\n",
                 std::string(resumed.message()).c_str());
    return 1;
  }

  const std::vector<std::string> exempt = absl::GetFlag(FLAGS_client_limit_exempt);
  absl::StatusOr<std::string> proxy_token = ReadTokenFile(absl::GetFlag(FLAGS_proxy_token_file));
  if (!proxy_token.ok()) {
    std::fprintf(stderr, "ply-lobby: --proxy_token_file: %s\n",
                 std::string(proxy_token.status().message()).c_str());
    return 2;
  }
  const ClientLimitOptions limit_options{
      .calls_per_second = absl::GetFlag(FLAGS_client_calls_per_s),
      .burst = absl::GetFlag(FLAGS_client_burst),
      .max_streams = absl::GetFlag(FLAGS_client_streams),
      .exempt = std::set<std::string>(exempt.begin(), exempt.end()),
      .trusted_proxies = absl::GetFlag(FLAGS_trusted_proxies),
      .proxy_token = *std::move(proxy_token)};
  if (const std::string problem = ClientLimits::Check(limit_options); !problem.empty()) {
    std::fprintf(stderr, "ply-lobby: --trusted_proxies: %s\n", problem.c_str());
    return 2;
  }
  ClientLimits limits(limit_options);
  LobbyServiceImpl service(&lobby, &executor, absl::GetFlag(FLAGS_watcher_queue), &limits);
  Analyzer analyzer(
      &lobby, &store, bots.get(), &executor,
      {.budget_ms = absl::GetFlag(FLAGS_analysis_ms),
       .max_depth = absl::GetFlag(FLAGS_analysis_depth),
       .max_nodes = absl::GetFlag(FLAGS_analysis_nodes),
       .parallel = absl::GetFlag(FLAGS_analysis_parallel),
       .max_running = absl::GetFlag(FLAGS_analysis_max_running),
       .max_queued = absl::GetFlag(FLAGS_analysis_max_queued),
       .client_in_flight = absl::GetFlag(FLAGS_analysis_client_in_flight),
       .client_per_hour = absl::GetFlag(FLAGS_analysis_client_per_hour),
       .instance = absl::StrCat(absl::GetFlag(FLAGS_host), ":", absl::GetFlag(FLAGS_port)),
       .kept_matches = absl::GetFlag(FLAGS_analysis_kept_matches),
       .metrics = &lobby.metrics()});
  service.set_analyzer(&analyzer);
  const std::string address =
      absl::StrCat(absl::GetFlag(FLAGS_host), ":", absl::GetFlag(FLAGS_port));
  absl::StatusOr<StartedGrpcServer> started = StartGrpcServer(
      {.address = address,
       .tls = {.cert_file = absl::GetFlag(FLAGS_tls_cert),
               .key_file = absl::GetFlag(FLAGS_tls_key),
               .client_ca_file = absl::GetFlag(FLAGS_tls_client_ca)},
       // No grace limit: a WatchMatch stream on an aged connection is not cut.
       .limits = {.max_age_ms = absl::GetFlag(FLAGS_max_connection_age_ms),
                  .max_idle_ms = absl::GetFlag(FLAGS_max_connection_idle_ms),
                  .max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams)},
       .max_receive_bytes = 64 << 10,
       .services = {&service}});
  if (!started.ok()) {
    std::fprintf(stderr, "ply-lobby: %s\n", std::string(started.status().message()).c_str());
    return absl::IsInvalidArgument(started.status()) ? 2 : 1;
  }
  std::unique_ptr<grpc::Server> server = std::move(started->server);
  const int port = started->port;
  std::unique_ptr<MetricsEndpoint> metrics;
  std::string metrics_note;
  if (const int metrics_port = absl::GetFlag(FLAGS_metrics_port); metrics_port >= 0) {
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> started = MetricsEndpoint::Start(
        absl::GetFlag(FLAGS_metrics_host), metrics_port, [&lobby] { return lobby.MetricsText(); });
    if (!started.ok()) {
      std::fprintf(stderr, "ply-lobby: %s\n", std::string(started.status().message()).c_str());
      return 1;
    }
    metrics = *std::move(started);
    metrics_note = absl::StrCat(", metrics http://", absl::GetFlag(FLAGS_metrics_host), ":",
                                metrics->port(), "/metrics");
  }
  std::printf("ply-lobby listening on %s:%d (bots: %s%s)\n", absl::GetFlag(FLAGS_host).c_str(),
              port, bots ? absl::GetFlag(FLAGS_bot_target).c_str() : "none", metrics_note.c_str());
  std::fflush(stdout);

  const int signo = WaitForStopSignal(signals);
  std::fprintf(stderr, "ply-lobby: signal %d: draining\n", signo);
  // Health-checking balancers stop sending here; the matches this instance drove go to the
  // others now rather than when a lease would expire; watchers are told to reconnect.
  server->GetHealthCheckService()->SetServingStatus(false);
  lobby.Shutdown();
  server->Shutdown(std::chrono::system_clock::now() +
                   std::chrono::seconds(absl::GetFlag(FLAGS_drain_s)));
  server->Wait();
  executor.Stop();
  return 0;
}

}  // namespace
}  // namespace ply::lobby

int main(int argc, char** argv) {
  ply::SetFlagsUsage(
      "the gRPC lobby (ply.v1.LobbyService). Example: ply-lobby --port=50050 "
      "--database_url='host=127.0.0.1 port=5432 dbname=ply user=postgres' "
      "--bot_target=ipv4:127.0.0.1:50051,127.0.0.1:50052");
  ply::ParseFlags(argc, argv);
  return ply::lobby::Main();
}
