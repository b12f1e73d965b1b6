#include "common/credentials.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ply {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a PEM file"));
  }
  return text.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTls& tls) {
  if (!tls.enabled()) {
    if (!tls.key_file.empty() || !tls.client_ca_file.empty()) {
      return absl::InvalidArgumentError("a TLS key or client CA needs a certificate too");
    }
    return grpc::InsecureServerCredentials();
  }
  if (tls.key_file.empty()) return absl::InvalidArgumentError("a TLS certificate needs its key");
  absl::StatusOr<std::string> cert = ReadPem(tls.cert_file);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(tls.key_file);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({*key, *cert});
  if (!tls.client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(tls.client_ca_file);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ClientTls& tls) {
  if (!tls.enabled()) {
    if (!tls.cert_file.empty() || !tls.key_file.empty()) {
      return absl::InvalidArgumentError("a client certificate needs the server's CA too");
    }
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions options;
  if (!tls.ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(tls.ca_file);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
  }
  if (!tls.cert_file.empty() || !tls.key_file.empty()) {
    if (tls.cert_file.empty() || tls.key_file.empty()) {
      return absl::InvalidArgumentError("a client certificate and its key go together");
    }
    absl::StatusOr<std::string> cert = ReadPem(tls.cert_file);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPem(tls.key_file);
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *cert;
    options.pem_private_key = *key;
  }
  return grpc::SslCredentials(options);
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  if (path.empty()) return std::string();
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  const std::string token(absl::StripAsciiWhitespace(text.str()));
  if (token.size() < kMinTokenBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, " holds ", token.size(),
                                                   " characters; a token needs at least ",
                                                   kMinTokenBytes, " (e.g. openssl rand -hex 32)"));
  }
  for (char c : token) {
    if (c < 0x21 || c > 0x7e) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " holds a character other than printable ASCII"));
    }
  }
  return token;
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  std::string bare = host;
  if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  in6_addr v6{};
  return inet_pton(AF_INET6, bare.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

void AddClientKeepalive(grpc::ChannelArguments& args) {
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
}

absl::Status ListenLikeAPlyServer(grpc::ServerBuilder& builder, const std::string& address,
                                  const ServerTls& tls, int* port) {
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeServerCredentials(tls);
  if (!credentials.ok()) return credentials.status();
  builder.AddListeningPort(address, *credentials, port);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  // gRPC's default, which 0 turned off: a third ping sooner than the interval above, with no
  // data sent in between, closes the connection (GOAWAY ENHANCE_YOUR_CALM). Ply's clients ping
  // every 20 s. With strikes off, one connection flooding pings took ply-bot from 51 MB to
  // 365 MB and a health check's latency to 2.3 s (docs/hardening.md, "Abuse cases").
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  return absl::OkStatus();
}

void LimitGrpcConnections(grpc::ServerBuilder& builder, const GrpcConnectionLimits& limits) {
  auto set = [&builder](const char* argument, int64_t value) {
    if (value > 0) {
      builder.AddChannelArgument(argument, static_cast<int>(std::min<int64_t>(value, INT_MAX)));
    }
  };
  set(GRPC_ARG_MAX_CONNECTION_AGE_MS, limits.max_age_ms);
  set(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, limits.max_age_grace_ms);
  set(GRPC_ARG_MAX_CONNECTION_IDLE_MS, limits.max_idle_ms);
  set(GRPC_ARG_MAX_CONCURRENT_STREAMS, limits.max_concurrent_streams);
}

}  // namespace ply
