// ply-bot: the bot service. Stateless: every request carries its whole position, so any number
// of instances can stand behind one round-robin client. Prints "ply-bot listening on HOST:PORT"
// on stdout once it serves (with --port=0 the port is chosen by the system), logs one line per
// request on stderr, and on SIGTERM or SIGINT drains: reports NOT_SERVING, refuses new searches,
// finishes those in flight, then exits.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "bot-service/bot_service.h"
#include "bot-service/worker_pool.h"
#include "common/credentials.h"
#include "common/flag_check.h"
#include "common/grpc_server.h"
#include "common/log_text.h"
#include "common/metrics_http.h"
#include "engine/core/flags_usage.h"
#include "engine/registry/registry.h"
#include "engine/search/tt.h"

ABSL_FLAG(std::string, host, "127.0.0.1",
          "Address to listen on. Beyond loopback (e.g. 0.0.0.0 in a container) ply-bot requires "
          "--auth_token_file or mutual TLS (--tls_client_ca), and refuses to start without.");
ABSL_FLAG(int, port, 50051, "Port to listen on; 0 lets the system choose a free one.");
ABSL_FLAG(int, workers, 0,
          "Search worker threads; 0 means one per core. Besides its transposition tables "
          "(--tt_mb), a worker keeps at most two 64 MiB Connect Four solver tables (the 7x6 "
          "board's and the last other size's) for the perfect level and analysis.");
ABSL_FLAG(int, queue, -1,
          "Requests that may wait for a worker; past that RESOURCE_EXHAUSTED. -1 means as many "
          "as there are workers.");
ABSL_FLAG(int, reserved_workers, 1,
          "Workers that background (bot-vs-bot) requests may not use, kept for interactive ones "
          "(a person waits); at most workers - 1.");
ABSL_FLAG(int, reserved_queue, 1,
          "Queue places that background requests may not take, kept for interactive ones.");
ABSL_FLAG(std::string, auth_token_file, "",
          "File holding a shared token (16+ printable characters) that every BotService call "
          "must carry as 'authorization: Bearer TOKEN' metadata; the health service stays "
          "open. Empty: no token.");
ABSL_FLAG(int, tt_mb, 16,
          "Transposition table size in MiB, 1..65536. A worker keeps one for each of the last "
          "3 games it served, so up to 3 times this per worker.");
ABSL_FLAG(int64_t, max_budget_ms, 30000, "Largest search budget a request may ask for, in ms.");
ABSL_FLAG(int64_t, deadline_margin_ms, 20,
          "Time kept back from each call's deadline for the reply, in ms.");
ABSL_FLAG(int64_t, max_connection_age_ms, 60000,
          "Connections are closed gracefully after this long, so that round-robin clients "
          "re-resolve and find new instances.");
ABSL_FLAG(int64_t, max_connection_idle_ms, 30000,
          "Connections with no call for this long are closed (a client reconnects on its next "
          "call), so connections left open and unused, or opened and never used, do not hold "
          "memory and file descriptors; 0: never.");
ABSL_FLAG(int, max_concurrent_streams, 1000,
          "Calls open at once on one client connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS); "
          "a gRPC client waits for a free one, a peer that ignores it loses the connection, so "
          "one connection cannot hold "
          "unbounded memory (about 12 KB a call); 0: no bound.");
ABSL_FLAG(int, metrics_port, -1,
          "Port of the Prometheus text endpoint (GET /metrics); 0 picks a free one, -1 turns it "
          "off. The same numbers are always available through the GetMetrics RPC.");
ABSL_FLAG(std::string, log_level, "info", "error, warning, info (one line per request) or debug.");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate (chain) to serve TLS with; empty: plaintext.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA that clients' certificates must chain to (mutual TLS); empty: any client.");
ABSL_FLAG(std::string, instance, "",
          "Name of this instance in replies and logs; default host:port.");

namespace ply::bot {
namespace {

// Searches on every worker before the instance reports SERVING, to build its tables and touch
// their memory; otherwise the first requests would spend part of their budget on that (page
// faults are slow on virtual machines: about 0.3 s for 32 MiB on the test machine). Three
// rounds, because the engine also allocates a scratch searcher per call, and malloc settles on
// reusing that memory, rather than mapping fresh pages, only after a couple of rounds. Tables
// made later (a game beyond the worker's last three) are faulted in by the searches that use
// them, within their budgets.
void WarmUp(SearchCache& cache) {
  const GameInfo& first = ListGames().front();
  absl::StatusOr<std::unique_ptr<AnyGame>> game = CreateGame(first.name);
  if (!game.ok()) return;
  for (int i = 0; i < 3; ++i) {
    (void)(*game)->ChooseMove({.level = first.levels.front(), .max_nodes = 1000}, &cache);
  }
  cache.TouchAll();
}

// The numeric flags, checked before anything starts: a sentence for the first out of range.
// Unchecked, --tt_mb=-1 became a size near 2^64 and the table's sizing loop spun forever (at
// 100% CPU, deaf to SIGTERM), --tt_mb=100000 died of bad_alloc, --queue=0 and
// --max_budget_ms=-1 started an instance that could serve nothing.
absl::Status CheckNumericFlags() {
  const double table_max = static_cast<double>(kMaxTableMegabytes);
  if (absl::Status s = CheckFlagRanges({
          PLY_FLAG_RANGE(port, 0, 65535, "a TCP port, or 0 for any free one"),
          PLY_FLAG_RANGE(workers, 0, 4096, "0 means one per core"),
          PLY_FLAG_RANGE(queue, -1, 1 << 20, "-1 means as many as there are workers"),
          PLY_FLAG_RANGE(reserved_workers, 0, 4096),
          PLY_FLAG_RANGE(reserved_queue, 0, 1 << 20),
          PLY_FLAG_RANGE(tt_mb, 1, table_max, "MiB per table"),
          PLY_FLAG_RANGE(max_budget_ms, 1, 24.0 * 3600 * 1000),
          PLY_FLAG_RANGE(deadline_margin_ms, 0, 60000),
          PLY_FLAG_RANGE(max_connection_age_ms, 1, 1e12),
          PLY_FLAG_RANGE(max_connection_idle_ms, 0, 1e12, "0 means never"),
          PLY_FLAG_RANGE(max_concurrent_streams, 0, 1 << 30, "0 means no bound"),
          PLY_FLAG_RANGE(metrics_port, -1, 65535, "-1 turns it off, 0 picks a free port"),
      });
      !s.ok()) {
    return s;
  }
  if (absl::GetFlag(FLAGS_queue) == 0) {
    return absl::InvalidArgumentError(
        "--queue=0 leaves no place for a request to wait: give 1 or more, or -1 for as many as "
        "there are workers");
  }
  return absl::OkStatus();
}

// Every worker's first table is written at warm-up: refuse sizes the machine cannot hold, rather
// than be killed for memory before serving.
absl::Status CheckTableMemory(int workers) {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return absl::OkStatus();
  const int64_t machine_mb = static_cast<int64_t>(pages) * page_size >> 20;
  const int64_t tables_mb = int64_t{workers} * absl::GetFlag(FLAGS_tt_mb);
  if (tables_mb > machine_mb) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tt_mb=", absl::GetFlag(FLAGS_tt_mb), " with ", workers, " workers needs ",
                     tables_mb, " MiB for their first tables alone, more than this machine's ",
                     machine_mb, " MiB: give a smaller --tt_mb or fewer --workers"));
  }
  return absl::OkStatus();
}

// Anyone who reaches a ply-bot can make it search for up to --max_budget_ms per call: beyond
// loopback it must know its callers, by their certificates or by the shared token.
absl::Status CheckExposure(std::string* token) {
  const std::string& host = absl::GetFlag(FLAGS_host);
  absl::StatusOr<std::string> read = ReadTokenFile(absl::GetFlag(FLAGS_auth_token_file));
  if (!read.ok()) return read.status();
  *token = *std::move(read);
  const bool mutual_tls =
      !absl::GetFlag(FLAGS_tls_cert).empty() && !absl::GetFlag(FLAGS_tls_client_ca).empty();
  if (!IsLoopbackHost(host) && token->empty() && !mutual_tls) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to listen on ", host,
        " without authentication: anyone reaching it could use its search time. Give "
        "--auth_token_file (and the lobby --bot_token_file with the same token), or mutual TLS "
        "(--tls_cert, --tls_key, --tls_client_ca), or listen on loopback (--host=127.0.0.1)"));
  }
  return absl::OkStatus();
}

int Main() {
  RouteProtobufLogs("ply-bot");
  if (absl::Status flags = CheckNumericFlags(); !flags.ok()) {
    std::fprintf(stderr, "ply-bot: %s\n", std::string(flags.message()).c_str());
    return 2;
  }
  std::string token;
  if (absl::Status exposure = CheckExposure(&token); !exposure.ok()) {
    std::fprintf(stderr, "ply-bot: %s\n", std::string(exposure.message()).c_str());
    return 2;
  }
  absl::StatusOr<LogLevel> log_level = ParseLogLevel(absl::GetFlag(FLAGS_log_level));
  if (!log_level.ok()) {
    std::fprintf(stderr, "ply-bot: %s\n", std::string(log_level.status().message()).c_str());
    return 2;
  }
  int workers = absl::GetFlag(FLAGS_workers);
  if (workers <= 0) workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int queue = absl::GetFlag(FLAGS_queue);
  if (queue < 0) queue = workers;
  if (absl::Status memory = CheckTableMemory(workers); !memory.ok()) {
    std::fprintf(stderr, "ply-bot: %s\n", std::string(memory.message()).c_str());
    return 2;
  }
  const int64_t max_budget_ms = absl::GetFlag(FLAGS_max_budget_ms);

  // Signals are taken by sigwait below; block them before any thread starts so that none of
  // gRPC's or the workers' threads receives them.
  const sigset_t signals = BlockStopSignals();

  WorkerPool pool({.workers = workers,
                   .queue_capacity = queue,
                   .reserved_workers = absl::GetFlag(FLAGS_reserved_workers),
                   .reserved_queue = absl::GetFlag(FLAGS_reserved_queue),
                   .tt_megabytes = static_cast<size_t>(absl::GetFlag(FLAGS_tt_mb))},
                  WarmUp);

  BotServiceImpl service(
      BotServiceOptions{
          .instance = absl::GetFlag(FLAGS_instance),
          .max_budget_ms = max_budget_ms,
          .deadline_margin_ms = absl::GetFlag(FLAGS_deadline_margin_ms),
          .log_level = *log_level,
          .auth_token = token,
      },
      &pool);
  const std::string address =
      absl::StrCat(absl::GetFlag(FLAGS_host), ":", absl::GetFlag(FLAGS_port));
  absl::StatusOr<StartedGrpcServer> started = StartGrpcServer(
      {.address = address,
       .tls = {.cert_file = absl::GetFlag(FLAGS_tls_cert),
               .key_file = absl::GetFlag(FLAGS_tls_key),
               .client_ca_file = absl::GetFlag(FLAGS_tls_client_ca)},
       .limits = {.max_age_ms = absl::GetFlag(FLAGS_max_connection_age_ms),
                  // Searches in flight on an aged connection may use their whole budget.
                  .max_age_grace_ms = max_budget_ms + 5000,
                  .max_idle_ms = absl::GetFlag(FLAGS_max_connection_idle_ms),
                  .max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams)},
       // A position is a few kilobytes at most; anything much larger is refused by gRPC itself.
       .max_receive_bytes = 1 << 20,
       .services = {&service}});
  if (!started.ok()) {
    std::fprintf(stderr, "ply-bot: %s\n", std::string(started.status().message()).c_str());
    return absl::IsInvalidArgument(started.status()) ? 2 : 1;
  }
  std::unique_ptr<grpc::Server> server = std::move(started->server);
  const int port = started->port;
  const std::string bound = absl::StrCat(absl::GetFlag(FLAGS_host), ":", port);
  if (absl::GetFlag(FLAGS_instance).empty()) {
    char hostname[256] = {};
    gethostname(hostname, sizeof(hostname) - 1);
    service.SetInstance(absl::StrCat(hostname, ":", port));
  }

  // Prometheus scrapes plain HTTP: the same text GetMetrics returns, on its own port.
  std::unique_ptr<MetricsEndpoint> metrics;
  std::string metrics_note;
  if (const int metrics_port = absl::GetFlag(FLAGS_metrics_port); metrics_port >= 0) {
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
        MetricsEndpoint::Start(absl::GetFlag(FLAGS_host), metrics_port,
                               [&service] { return service.MetricsSnapshot().prometheus_text(); });
    if (!endpoint.ok()) {
      std::fprintf(stderr, "ply-bot: %s\n", std::string(endpoint.status().message()).c_str());
      return 1;
    }
    metrics = *std::move(endpoint);
    metrics_note = absl::StrCat(", metrics http://", absl::GetFlag(FLAGS_host), ":",
                                metrics->port(), "/metrics");
  }
  std::printf(
      "ply-bot listening on %s (instance %s, %d workers, queue %d, kept for interactive: %d "
      "workers, %d queue places%s%s)\n",
      bound.c_str(), service.Instance().c_str(), workers, queue, pool.reserved_workers(),
      pool.reserved_queue(), token.empty() ? "" : ", token required", metrics_note.c_str());
  std::fflush(stdout);

  const int signo = WaitForStopSignal(signals);
  std::fprintf(stderr, "ply-bot: signal %d: draining (%d searching, %d waiting)\n", signo,
               pool.busy(), pool.queued());
  // Health-checking clients stop sending here; calls that still arrive get UNAVAILABLE and
  // their retry policy takes them to another instance.
  server->GetHealthCheckService()->SetServingStatus(false);
  service.StartDraining();
  pool.WaitIdle();
  // Every accepted call has been finished by its worker: give the replies a moment to leave.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server->Wait();
  metrics.reset();
  std::fprintf(stderr, "ply-bot: drained, exiting\n");
  return 0;
}

}  // namespace
}  // namespace ply::bot

int main(int argc, char** argv) {
  ply::SetFlagsUsage("the gRPC bot service (ply.v1.BotService). Example: ply-bot --port=50051");
  ply::ParseFlags(argc, argv);
  return ply::bot::Main();
}
