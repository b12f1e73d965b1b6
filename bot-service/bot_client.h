// BotClient: how the lobby (and the load tool) talks to ply-bot. One channel spreads requests
// over many instances with round_robin; subchannels are health-checked, so an instance that
// drains (NOT_SERVING) or dies is skipped; UNAVAILABLE and RESOURCE_EXHAUSTED answers are retried
// on another instance within the call's deadline. Adding a ply-bot process adds capacity.
//
// Targets: "ipv4:10.0.0.1:50051,10.0.0.2:50051" (a fixed list), "dns:///ply-bot:50051" (every
// address of a name; re-resolved when a connection closes, which the server forces with its
// max connection age), or a plain "host:port".
#ifndef PLY_BOT_SERVICE_BOT_CLIENT_H_
#define PLY_BOT_SERVICE_BOT_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ply/v1/bot.grpc.pb.h"

namespace ply {

struct BotClientOptions {
  std::string target;
  // Attempts per call, the first included (gRPC caps this at 5).
  int max_attempts = 4;
  // Skip instances whose health service does not say SERVING.
  bool health_check = true;
  // Plaintext when null (see credentials.h for TLS).
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // The instances' shared token (ply-bot --auth_token_file), sent with every call as
  // "authorization: Bearer TOKEN" metadata; empty: none. Metadata rather than call credentials,
  // which gRPC sends over TLS channels only.
  std::string token;
};

class BotClient {
 public:
  explicit BotClient(const BotClientOptions& options);

  // The service config the channel uses (round_robin, health checking, retries), as JSON.
  static std::string ServiceConfigJson(const BotClientOptions& options);

  // Asks for a move; the request's `priority` says whether a person waits for it. `timeout` bounds
  // the whole call, retries included, and becomes the server's deadline (its search budget is
  // derived from it).
  absl::StatusOr<v1::ChooseMoveResponse> ChooseMove(const v1::ChooseMoveRequest& request,
                                                    absl::Duration timeout);

  // A call in progress, started by ChooseMoveAsync.
  class PendingMove {
   public:
    // Stops the remote search; the callback then runs with CANCELLED.
    void Cancel() { context_.TryCancel(); }

   private:
    friend class BotClient;
    grpc::ClientContext context_;
    v1::ChooseMoveRequest request_;
    v1::ChooseMoveResponse response_;
  };
  using MoveCallback = std::function<void(absl::StatusOr<v1::ChooseMoveResponse>)>;
  // Like ChooseMove, without blocking: `done` runs once, on a gRPC thread, and must not block.
  std::shared_ptr<PendingMove> ChooseMoveAsync(const v1::ChooseMoveRequest& request,
                                               absl::Duration timeout, MoveCallback done);

  absl::StatusOr<v1::ListGamesResponse> ListGames(absl::Duration timeout);
  absl::StatusOr<v1::GetMetricsResponse> GetMetrics(absl::Duration timeout);

  // Waits up to `timeout` for the channel to connect to at least one instance.
  bool WaitForReady(absl::Duration timeout);

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 private:
  // Deadline and token, for every call.
  void Prepare(grpc::ClientContext& context, absl::Duration timeout) const;

  std::shared_ptr<grpc::Channel> channel_;
  std::string token_;
  std::unique_ptr<v1::BotService::Stub> stub_;
};

}  // namespace ply

#endif  // PLY_BOT_SERVICE_BOT_CLIENT_H_
