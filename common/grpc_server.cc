#include "common/grpc_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/strings/str_cat.h"

namespace ply {

sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

int WaitForStopSignal(const sigset_t& signals) {
  int signo = 0;
  sigwait(&signals, &signo);
  return signo;
}

absl::StatusOr<StartedGrpcServer> StartGrpcServer(const GrpcServerSetup& setup) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  StartedGrpcServer started;
  if (absl::Status listen = ListenLikeAPlyServer(builder, setup.address, setup.tls, &started.port);
      !listen.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("TLS: ", listen.message()));
  }
  LimitGrpcConnections(builder, setup.limits);
  builder.SetMaxReceiveMessageSize(setup.max_receive_bytes);
  for (grpc::Service* service : setup.services) builder.RegisterService(service);
  started.server = builder.BuildAndStart();
  if (started.server == nullptr || started.port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", setup.address));
  }
  return started;
}

}  // namespace ply
