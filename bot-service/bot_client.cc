#include "bot-service/bot_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/credentials.h"
#include "common/proto_convert.h"

namespace ply {
namespace {

std::chrono::system_clock::time_point DeadlineIn(absl::Duration timeout) {
  return absl::ToChronoTime(absl::Now() + timeout);
}

}  // namespace

std::string BotClient::ServiceConfigJson(const BotClientOptions& options) {
  // Retries go to the next instance in the round robin. Backoffs are short: a full instance
  // answers at once, and the caller's deadline bounds the whole call anyway.
  std::string health = options.health_check ? R"("healthCheckConfig": {"serviceName": ""},)" : "";
  return absl::StrFormat(R"({
  "loadBalancingConfig": [{"round_robin": {}}],
  %s
  "methodConfig": [{
    "name": [{"service": "ply.v1.BotService"}],
    "retryPolicy": {
      "maxAttempts": %d,
      "initialBackoff": "0.005s",
      "maxBackoff": "0.1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"]
    }
  }]
})",
                         health, options.max_attempts);
}

BotClient::BotClient(const BotClientOptions& options) : token_(options.token) {
  grpc::ChannelArguments args;
  args.SetServiceConfigJSON(ServiceConfigJson(options));
  // Detect a dead instance between calls too, not only when a call fails.
  AddClientKeepalive(args);
  // Reconnect quickly to an instance that comes back.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  channel_ = grpc::CreateCustomChannel(
      options.target,
      options.credentials ? options.credentials : grpc::InsecureChannelCredentials(), args);
  stub_ = v1::BotService::NewStub(channel_);
}

void BotClient::Prepare(grpc::ClientContext& context, absl::Duration timeout) const {
  context.set_deadline(DeadlineIn(timeout));
  if (!token_.empty()) context.AddMetadata("authorization", absl::StrCat("Bearer ", token_));
}

absl::StatusOr<v1::ChooseMoveResponse> BotClient::ChooseMove(const v1::ChooseMoveRequest& request,
                                                             absl::Duration timeout) {
  grpc::ClientContext context;
  Prepare(context, timeout);
  v1::ChooseMoveResponse response;
  grpc::Status status = stub_->ChooseMove(&context, request, &response);
  if (!status.ok()) return ToAbslStatus(status);
  return response;
}

std::shared_ptr<BotClient::PendingMove> BotClient::ChooseMoveAsync(
    const v1::ChooseMoveRequest& request, absl::Duration timeout, MoveCallback done) {
  auto call = std::make_shared<PendingMove>();
  call->request_ = request;
  Prepare(call->context_, timeout);
  // The callback keeps the call (context, messages) alive until gRPC is done with it.
  stub_->async()->ChooseMove(&call->context_, &call->request_, &call->response_,
                             [call, done = std::move(done)](grpc::Status status) {
                               if (status.ok()) {
                                 done(std::move(call->response_));
                               } else {
                                 done(ToAbslStatus(status));
                               }
                             });
  return call;
}

absl::StatusOr<v1::ListGamesResponse> BotClient::ListGames(absl::Duration timeout) {
  grpc::ClientContext context;
  Prepare(context, timeout);
  v1::ListGamesResponse response;
  grpc::Status status = stub_->ListGames(&context, v1::ListGamesRequest(), &response);
  if (!status.ok()) return ToAbslStatus(status);
  return response;
}

absl::StatusOr<v1::GetMetricsResponse> BotClient::GetMetrics(absl::Duration timeout) {
  grpc::ClientContext context;
  Prepare(context, timeout);
  v1::GetMetricsResponse response;
  grpc::Status status = stub_->GetMetrics(&context, v1::GetMetricsRequest(), &response);
  if (!status.ok()) return ToAbslStatus(status);
  return response;
}

bool BotClient::WaitForReady(absl::Duration timeout) {
  return channel_->WaitForConnected(DeadlineIn(timeout));
}

}  // namespace ply
