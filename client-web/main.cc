// ply-web: the web page of ply and its gateway to the lobby. Serves the page, a JSON API and live
// matches as Server-Sent Events, and talks to the lobby over gRPC like any other client. Holds
// nothing a browser depends on, so any number of instances may stand behind a load balancer.
// Prints "ply-web listening on http://HOST:PORT" on stdout once it serves (with --port=0 the
// system chooses the port).
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <cstdio>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "client-web/gateway.h"
#include "common/bounded_server.h"
#include "common/client_address.h"
#include "common/credentials.h"
#include "common/flag_check.h"
#include "engine/core/flags_usage.h"
#include "lobby-client/lobby_link.h"

ABSL_FLAG(std::string, host, "127.0.0.1",
          "Address to listen on (loopback unless told otherwise, like the other ply servers).");
ABSL_FLAG(int, port, 8080, "Port to listen on; 0 lets the system choose a free one.");
ABSL_FLAG(std::string, lobby, "127.0.0.1:50050",
          "The lobby: HOST:PORT, several comma-separated (round robin), or dns:///NAME:PORT. "
          "$PLY_SERVER when the flag is not given.");
ABSL_FLAG(bool, lobby_tls, false,
          "Reach the lobby over TLS, verifying it against the system's trusted roots.");
ABSL_FLAG(std::string, lobby_tls_ca, "", "PEM CA to verify a TLS lobby against; implies TLS.");
ABSL_FLAG(std::string, lobby_tls_cert, "",
          "PEM client certificate, for a lobby that requires one.");
ABSL_FLAG(std::string, lobby_tls_key, "", "PEM private key of --lobby_tls_cert.");
ABSL_FLAG(int, threads, 512,
          "Connections served at once; each live match a browser watches holds one. Event "
          "streams beyond --threads less 32 are refused, keeping threads for other requests.");
ABSL_FLAG(double, client_rps, 20, "Requests per second one client address may make.");
ABSL_FLAG(double, client_burst, 60, "Requests one client address may make at once above its rate.");
ABSL_FLAG(int, client_streams, 16, "Live match streams one client address may hold; 0: no limit.");
ABSL_FLAG(int, client_connections, 32,
          "Connections one client address may hold open at once (each holds a thread); 0: no "
          "limit. Not applied with --trust_forwarded_for, where every client is the proxy.");
ABSL_FLAG(int, request_timeout_s, 10,
          "Seconds a request may take to arrive whole (headers and body), from its first byte.");
ABSL_FLAG(int, keepalive_s, 15, "Seconds between keep-alive comments on a quiet event stream.");
ABSL_FLAG(double, presence_hold_s, 25,
          "How long one 'I am here' from a player's page keeps the seat present in the lobby "
          "(a WatchMatch stream with the seat's token); the page repeats it at a third of this.");
ABSL_FLAG(int, presence_holds, 100,
          "Players' seats this instance holds present at once (one lobby stream each: the "
          "lobby's --client_streams must leave room for them and the match feeds).");
ABSL_FLAG(bool, healthcheck, false,
          "Ask the ply-web on 127.0.0.1:--port for GET /healthz and exit 0 when it answers 200 "
          "(for container health checks).");
ABSL_FLAG(std::string, proxy_token_file, "",
          "A file with the secret the lobby trusts as a proxy's (its --proxy_token_file): every "
          "lobby call carries it, so the lobby applies its per-client rules (rates, streams, "
          "quotas, registrations) to each browser, not to this gateway as one client.");
ABSL_FLAG(bool, trust_forwarded_for, false,
          "Count clients by the last X-Forwarded-For address, the one the proxy in front added "
          "(only behind a proxy that sets or appends it).");

namespace {

// Every numeric flag, checked before anything starts: a sentence and exit 2 for a value out of
// range, where some were clamped without a word (--threads=8 served 40) and others started a
// gateway that misbehaved (--client_rps=-1, --presence_hold_s=0).
absl::Status CheckNumericFlags() {
  return ply::CheckFlagRanges({
      PLY_FLAG_RANGE(port, 0, 65535, "0 picks a free port"),
      PLY_FLAG_RANGE(threads, 40, 65536, "32 are kept for requests other than event streams"),
      PLY_FLAG_RANGE(client_rps, 0, 1e9, "0 means no limit"),
      PLY_FLAG_RANGE(client_burst, 0, 1e9),
      PLY_FLAG_RANGE(client_streams, 0, 1e8, "0 means no limit"),
      PLY_FLAG_RANGE(client_connections, 0, 1e8, "0 means no limit"),
      PLY_FLAG_RANGE(request_timeout_s, 1, 3600),
      PLY_FLAG_RANGE(keepalive_s, 1, 3600),
      PLY_FLAG_RANGE(presence_hold_s, 0.1, 3600),
      PLY_FLAG_RANGE(presence_holds, 0, 1e7),
  });
}

// cpp-httplib 0.11 listens with a backlog of 5 (fixed when Debian built it). Browsers reconnect
// their event streams all at once when an instance restarts; with a queue of 5 most of their
// connections are dropped and retried only a second or more later. Linux takes a second listen()
// on a listening socket as a new backlog, so the socket on `port` gets a long queue here.
void WidenAcceptQueue(int port) {
  for (int fd = 0; fd < 1024; ++fd) {
    int listening = 0;
    socklen_t size = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 || !listening) continue;
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) continue;
    const int bound = address.ss_family == AF_INET6
                          ? ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port)
                          : ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
    if (bound == port) listen(fd, SOMAXCONN);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ply::SetFlagsUsage("ply-web --port=8080 --lobby=HOST:PORT[,HOST:PORT]");
  ply::ParseFlags(argc, argv);
  if (absl::Status flags = CheckNumericFlags(); !flags.ok()) {
    std::fprintf(stderr, "ply-web: %s\n", std::string(flags.message()).c_str());
    return 2;
  }
  if (absl::GetFlag(FLAGS_healthcheck)) {
    httplib::Client client("127.0.0.1", absl::GetFlag(FLAGS_port));
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(2, 0);
    httplib::Result res = client.Get("/healthz");
    return res && res->status == 200 ? 0 : 1;
  }
  // Signals are taken by sigwait below; blocked before any thread starts so none of them gets it.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A browser that goes away mid-write must not kill the process.
  signal(SIGPIPE, SIG_IGN);

  std::string lobby = absl::GetFlag(FLAGS_lobby);
  const char* env = std::getenv("PLY_SERVER");
  if (env != nullptr && *env != '\0' && lobby == "127.0.0.1:50050") lobby = env;
  absl::StatusOr<ply::client::LobbyTarget> target = ply::client::ParseServers(lobby);
  if (!target.ok()) {
    std::fprintf(stderr, "ply-web: --lobby: %s\n", std::string(target.status().message()).c_str());
    return 2;
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (absl::GetFlag(FLAGS_lobby_tls) || !absl::GetFlag(FLAGS_lobby_tls_ca).empty()) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> made =
        ply::MakeChannelCredentials({.ca_file = absl::GetFlag(FLAGS_lobby_tls_ca),
                                     .cert_file = absl::GetFlag(FLAGS_lobby_tls_cert),
                                     .key_file = absl::GetFlag(FLAGS_lobby_tls_key),
                                     .system_roots = absl::GetFlag(FLAGS_lobby_tls)});
    if (!made.ok()) {
      std::fprintf(stderr, "ply-web: %s\n", std::string(made.status().message()).c_str());
      return 2;
    }
    credentials = *made;
  }
  absl::StatusOr<std::string> secret = ply::ReadTokenFile(absl::GetFlag(FLAGS_proxy_token_file));
  if (!secret.ok()) {
    std::fprintf(stderr, "ply-web: --proxy_token_file: %s\n",
                 std::string(secret.status().message()).c_str());
    return 2;
  }
  ply::client::SetProxyCredential(*std::move(secret));
  const int threads = absl::GetFlag(FLAGS_threads);
  ply::web::Gateway gateway(
      *target, credentials,
      {
          .client_rps = absl::GetFlag(FLAGS_client_rps),
          .client_burst = absl::GetFlag(FLAGS_client_burst),
          .client_streams = absl::GetFlag(FLAGS_client_streams),
          .max_streams = threads - 32,
          .keepalive = absl::Seconds(absl::GetFlag(FLAGS_keepalive_s)),
          .trust_forwarded_for = absl::GetFlag(FLAGS_trust_forwarded_for),
          .presence_hold = absl::Seconds(absl::GetFlag(FLAGS_presence_hold_s)),
          .max_presence_holds = static_cast<size_t>(absl::GetFlag(FLAGS_presence_holds)),
      });
  ply::BoundedServer server({
      .request_deadline = absl::Seconds(absl::GetFlag(FLAGS_request_timeout_s)),
      .per_client =
          absl::GetFlag(FLAGS_trust_forwarded_for) ? 0 : absl::GetFlag(FLAGS_client_connections),
      .client_key = ply::ClientAddressKey,
      .threads = threads,
  });
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  gateway.Install(server);

  const std::string host = absl::GetFlag(FLAGS_host);
  int port = absl::GetFlag(FLAGS_port);
  if (port == 0) {
    port = server.bind_to_any_port(host);
  } else if (!server.bind_to_port(host, port)) {
    port = -1;
  }
  if (port < 0) {
    std::fprintf(stderr, "ply-web: cannot listen on %s:%d\n", host.c_str(),
                 absl::GetFlag(FLAGS_port));
    return 1;
  }
  WidenAcceptQueue(port);
  std::thread serving([&] { server.listen_after_bind(); });
  std::printf("ply-web listening on http://%s:%d (lobby %s)\n", host.c_str(), port,
              target->key.c_str());
  std::fflush(stdout);
  int signo = 0;
  sigwait(&signals, &signo);
  std::fprintf(stderr, "ply-web: signal %d: stopping\n", signo);
  server.stop();
  serving.join();
  return 0;
}
