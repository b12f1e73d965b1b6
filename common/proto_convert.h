// Conversions between the engine's types and the ply.v1 wire messages, and between absl::Status
// (used inside the services) and grpc::Status (used only at the RPC boundary). Shared by ply-bot,
// its client library and the lobby.
#ifndef PLY_COMMON_PROTO_CONVERT_H_
#define PLY_COMMON_PROTO_CONVERT_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "engine/core/options.h"
#include "engine/registry/any_game.h"
#include "ply/v1/game.pb.h"

namespace ply {

void ToProto(const GameInfo& info, v1::GameInfo* out);
GameOptions FromProto(const v1::GameSpec& spec);

// The codes are numerically the same in both libraries.
inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}
inline absl::Status ToAbslStatus(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace ply

#endif  // PLY_COMMON_PROTO_CONVERT_H_
