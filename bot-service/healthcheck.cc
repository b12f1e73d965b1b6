// ply-healthcheck: asks a gRPC server's standard health service (grpc.health.v1) whether it is
// SERVING. Exit 0 when it is, 1 otherwise, with one line on stderr saying why. For container
// health checks (Compose) and scripts; Kubernetes has gRPC probes of its own.
//
//   ply-healthcheck 127.0.0.1:50051 [SERVICE]
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "grpc/health/v1/health.grpc.pb.h"

int main(int argc, char** argv) {
  constexpr const char* kUsage =
      "usage: ply-healthcheck HOST:PORT [SERVICE]\n"
      "Asks the server's grpc.health.v1 service whether SERVICE (default: the whole server) is\n"
      "SERVING: exit 0 when it is, 1 when not or unreachable (2 s), 2 for a wrong command line.\n";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h" || arg == "-help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg.starts_with("-")) {
      std::fprintf(stderr, "ply-healthcheck: unknown flag %s\n%s", argv[i], kUsage);
      return 2;
    }
  }
  if (argc < 2 || argc > 3) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  auto stub = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  grpc::health::v1::HealthCheckRequest request;
  if (argc == 3) request.set_service(argv[2]);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) {
    std::fprintf(stderr, "ply-healthcheck: %s: %s\n", argv[1], status.error_message().c_str());
    return 1;
  }
  if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    std::fprintf(stderr, "ply-healthcheck: %s is not serving\n", argv[1]);
    return 1;
  }
  return 0;
}
