// Transport security for every ply gRPC endpoint, from PEM files named by flags: a server with
// a certificate and key (and, for mutual TLS, the CA its clients' certificates must chain to),
// and a client that verifies its server against a CA (and presents its own certificate for
// mutual TLS). Empty file names mean plaintext, for loopback and trusted networks.
#ifndef PLY_COMMON_CREDENTIALS_H_
#define PLY_COMMON_CREDENTIALS_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ply {

struct ServerTls {
  std::string cert_file;
  std::string key_file;
  // When set, clients must present a certificate signed by this CA.
  std::string client_ca_file;
  bool enabled() const { return !cert_file.empty(); }
};

struct ClientTls {
  // The CA the server's certificate must chain to; empty means plaintext unless system_roots.
  std::string ca_file;
  // This client's certificate and key, for servers that require mutual TLS.
  std::string cert_file;
  std::string key_file;
  // TLS without a CA file: the server's certificate must chain to one of the system's trusted
  // roots (what gRPC loads when given no roots: $GRPC_DEFAULT_SSL_ROOTS_FILE_PATH if set, else
  // the operating system's bundle, e.g. /etc/ssl/certs/ca-certificates.crt on Debian).
  bool system_roots = false;
  bool enabled() const { return !ca_file.empty() || system_roots; }
};

// Errors name the file that could not be read or the flag that is missing.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTls& tls);
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ClientTls& tls);

// A shared secret from a file (a Docker or Kubernetes secret): its content without surrounding
// whitespace, at least kMinTokenBytes of printable ASCII (it travels as gRPC metadata). Errors
// name the file, never its content. An empty path (a token flag left unset) is no token: "".
inline constexpr size_t kMinTokenBytes = 16;
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// Whether a listen host reaches this machine only: 127.0.0.0/8, ::1, "localhost".
bool IsLoopbackHost(const std::string& host);

// The keep-alive pings of every ply connection: each side pings after this long without data,
// also between calls (a watch stream may be quiet for minutes), and drops a peer that does not
// answer within the timeout. Servers accept a ping every 5 s at most (ListenLikeAPlyServer).
inline constexpr int kKeepaliveTimeMs = 20000;
inline constexpr int kKeepaliveTimeoutMs = 10000;
// Sets them on a client channel.
void AddClientKeepalive(grpc::ChannelArguments& args);

// What every ply server does before registering its services: listen on `address` (TLS when
// `tls` says so; the bound port lands in *port once the server starts), refuse to share the port
// with another process, and keep idle connections alive with pings (a client's watch stream may
// be quiet for minutes) while telling a dead peer from a quiet one, and close a connection that
// pings more often than every 5 s with nothing else to say (a ping flood).
absl::Status ListenLikeAPlyServer(grpc::ServerBuilder& builder, const std::string& address,
                                  const ServerTls& tls, int* port);

// How long, how idle and how busy one client connection may be; 0 sets no limit (gRPC's
// default). Values past gRPC's int are taken as its largest.
struct GrpcConnectionLimits {
  // Connections are closed gracefully after this long (so round-robin clients find new
  // instances), calls still open on one after a further `max_age_grace_ms` (0: never cut).
  int64_t max_age_ms = 0;
  int64_t max_age_grace_ms = 0;
  // A connection with no call for this long is closed; the client reconnects on its next call.
  int64_t max_idle_ms = 0;
  // Streams open at once on one connection (SETTINGS_MAX_CONCURRENT_STREAMS; gRPC 1.51's
  // default is unbounded, and each open stream holds a call of about 12 KB until it ends).
  // gRPC enforces it only on a peer that acknowledged the server's SETTINGS.
  int64_t max_concurrent_streams = 0;
};
void LimitGrpcConnections(grpc::ServerBuilder& builder, const GrpcConnectionLimits& limits);

}  // namespace ply

#endif  // PLY_COMMON_CREDENTIALS_H_
