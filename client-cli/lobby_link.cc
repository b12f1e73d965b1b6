#include "client-cli/lobby_link.h"

#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bot-service/proto_convert.h"

namespace ply::client {
namespace {

constexpr absl::Duration kCallDeadline = absl::Seconds(10);

template <class Call>
auto Unary(Call call, const std::string& token = "") {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kCallDeadline));
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
  return call(&context);
}

}  // namespace

LobbyClient::LobbyClient(std::string address, std::shared_ptr<grpc::ChannelCredentials> credentials)
    : address_(std::move(address)) {
  // gRPC's own reconnection backoff grows to two minutes; a player waiting for a restarted
  // lobby should be back within seconds of it.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 500);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 500);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 4000);
  // A watch stream may be quiet for minutes: pings notice a silently dropped link (the lobby
  // accepts one every 5 s at most), so the client reconnects instead of waiting forever.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  channel_ = grpc::CreateCustomChannel(
      address_, credentials ? credentials : grpc::InsecureChannelCredentials(), args);
  stub_ = v1::LobbyService::NewStub(channel_);
}

#define PLY_UNARY(Response, Method, request, token)                                               \
  Response response;                                                                              \
  grpc::Status status =                                                                           \
      Unary([&](grpc::ClientContext* c) { return stub_->Method(c, request, &response); }, token); \
  if (!status.ok()) return ToAbslStatus(status);                                                  \
  return response

absl::StatusOr<v1::ListGamesResponse> LobbyClient::ListGames() {
  PLY_UNARY(v1::ListGamesResponse, ListGames, v1::ListGamesRequest(), "");
}
absl::StatusOr<v1::CreateMatchResponse> LobbyClient::CreateMatch(
    const v1::CreateMatchRequest& request) {
  PLY_UNARY(v1::CreateMatchResponse, CreateMatch, request, "");
}
absl::StatusOr<v1::ListMatchesResponse> LobbyClient::ListMatches(
    const v1::ListMatchesRequest& request) {
  PLY_UNARY(v1::ListMatchesResponse, ListMatches, request, "");
}
absl::StatusOr<v1::Match> LobbyClient::GetMatch(int64_t match_id) {
  v1::GetMatchRequest request;
  request.set_match_id(match_id);
  PLY_UNARY(v1::Match, GetMatch, request, "");
}
absl::StatusOr<v1::JoinMatchResponse> LobbyClient::JoinMatch(const v1::JoinMatchRequest& request) {
  PLY_UNARY(v1::JoinMatchResponse, JoinMatch, request, "");
}
absl::StatusOr<v1::MakeMoveResponse> LobbyClient::MakeMove(const v1::MakeMoveRequest& request,
                                                           const std::string& token) {
  PLY_UNARY(v1::MakeMoveResponse, MakeMove, request, token);
}
absl::StatusOr<v1::Match> LobbyClient::Resign(int64_t match_id, const std::string& token) {
  v1::ResignRequest request;
  request.set_match_id(match_id);
  PLY_UNARY(v1::Match, Resign, request, token);
}
absl::StatusOr<v1::Match> LobbyClient::OfferDraw(int64_t match_id, const std::string& token) {
  v1::OfferDrawRequest request;
  request.set_match_id(match_id);
  PLY_UNARY(v1::Match, OfferDraw, request, token);
}
#undef PLY_UNARY

std::string Describe(const absl::Status& status, const std::string& address) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      return absl::StrCat("cannot reach the lobby at ", address, " (", status.message(),
                          "); is it running? (`make up` starts the local stack)");
    case absl::StatusCode::kDeadlineExceeded:
      return absl::StrCat("the lobby at ", address, " did not answer in time");
    default:
      return std::string(status.message());
  }
}

MatchStream::MatchStream(LobbyClient* lobby, int64_t match_id)
    : lobby_(lobby), match_id_(match_id) {
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { Run(); });
}

MatchStream::~MatchStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (context_ != nullptr) context_->TryCancel();
  }
  stop_cv_.notify_all();
  thread_.join();
  close(wake_[0]);
  close(wake_[1]);
}

std::vector<MatchStream::Item> MatchStream::Take() {
  char drain[64];
  while (read(wake_[0], drain, sizeof(drain)) > 0) {
  }
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(items_);
}

void MatchStream::Push(Item item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(std::move(item));
  }
  const char one = 1;
  (void)!write(wake_[1], &one, 1);
}

bool MatchStream::Wait(absl::Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !stop_cv_.wait_for(lock, absl::ToChronoNanoseconds(d), [this] { return stopping_; });
}

void MatchStream::Run() {
  std::optional<int> seen;  // the last ply delivered; unset until the first snapshot
  absl::Duration backoff = absl::Milliseconds(250);
  bool lost = false;
  for (;;) {
    grpc::ClientContext context;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      context_ = &context;
    }
    v1::WatchMatchRequest request;
    request.set_match_id(match_id_);
    if (seen) request.set_after_ply(*seen);
    std::unique_ptr<grpc::ClientReader<v1::MatchEvent>> reader =
        lobby_->stub()->WatchMatch(&context, request);
    v1::MatchEvent event;
    bool got_any = false;
    while (reader->Read(&event)) {
      if (!got_any && lost) {
        Push({.notice = "Reconnected to the lobby."});
        lost = false;
      }
      got_any = true;
      backoff = absl::Milliseconds(250);
      if (event.has_snapshot()) seen = event.snapshot().moves_size();
      if (event.has_resync()) seen = event.resync().moves_size();
      if (event.has_move_applied()) seen = event.move_applied().move().ply();
      Push({.event = event});
    }
    const grpc::Status status = reader->Finish();
    {
      std::lock_guard<std::mutex> lock(mu_);
      context_ = nullptr;
      if (stopping_) return;
    }
    if (status.ok()) {
      Push({.ended = true});
      return;
    }
    switch (status.error_code()) {
      case grpc::StatusCode::NOT_FOUND:
      case grpc::StatusCode::INVALID_ARGUMENT:
      case grpc::StatusCode::PERMISSION_DENIED:
      case grpc::StatusCode::UNAUTHENTICATED:
      case grpc::StatusCode::UNIMPLEMENTED:
        Push({.ended = true, .error = ToAbslStatus(status)});
        return;
      case grpc::StatusCode::OUT_OF_RANGE:
        // Our after_ply is ahead of what the lobby has (a database restored from a backup?):
        // start over from a full snapshot.
        seen.reset();
        continue;
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        // We fell behind; pick up from the last move we have, at once.
        if (got_any) continue;
        break;
      default:
        break;
    }
    lost = true;
    Push({.notice = absl::StrFormat("Connection to the lobby lost (%s); retrying in %.1f s...",
                                    status.error_message(), absl::ToDoubleSeconds(backoff))});
    if (!Wait(backoff)) return;
    backoff = std::min(backoff * 2, absl::Seconds(8));
  }
}

}  // namespace ply::client
