// How every ply gRPC server starts and stops: the stop signals taken by one waiting thread, the
// health and reflection services, the listening port set up by ListenLikeAPlyServer, the
// connection limits, the services registered, and a bounded request size.
#ifndef PLY_COMMON_GRPC_SERVER_H_
#define PLY_COMMON_GRPC_SERVER_H_

#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/credentials.h"

namespace ply {

// Blocks SIGTERM and SIGINT in the calling thread and in every thread it starts afterwards (call
// it first thing in main), so that only WaitForStopSignal receives them.
sigset_t BlockStopSignals();
// Waits for one of `signals`; returns its number.
int WaitForStopSignal(const sigset_t& signals);

struct GrpcServerSetup {
  std::string address;  // host:port; port 0 takes a free one
  ServerTls tls;
  GrpcConnectionLimits limits;
  int max_receive_bytes = 64 << 10;
  std::vector<grpc::Service*> services;
};

struct StartedGrpcServer {
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

// Starts a server with the health service (SERVING until told otherwise) and reflection.
// INVALID_ARGUMENT when the TLS files cannot be used, UNAVAILABLE when the address cannot be
// listened on; both say what and where.
absl::StatusOr<StartedGrpcServer> StartGrpcServer(const GrpcServerSetup& setup);

}  // namespace ply

#endif  // PLY_COMMON_GRPC_SERVER_H_
