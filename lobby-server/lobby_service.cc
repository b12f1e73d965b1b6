#include "lobby-server/lobby_service.h"

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/proto_convert.h"
#include "lobby-server/analysis/analyze_stream.h"
#include "lobby-server/events/write_queue.h"

namespace ply::lobby {

std::string BearerToken(const grpc::CallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return "";
  std::string value(it->second.data(), it->second.size());
  constexpr char kBearer[] = "Bearer ";
  constexpr size_t kBearerSize = sizeof(kBearer) - 1;
  if (value.size() > kBearerSize && absl::StartsWithIgnoreCase(value, kBearer)) {
    return value.substr(kBearerSize);
  }
  // Not a bearer credential: garbage, which Authenticate rejects with its message.
  return value.empty() ? "-" : value;
}

std::string LobbyServiceImpl::ClientOf(const grpc::CallbackServerContext& context) const {
  if (limits_ == nullptr) return ClientLimits::AddressOf(context.peer());
  const auto& metadata = context.client_metadata();
  const auto value = [&metadata](const char* key) {
    auto it = metadata.find(key);
    return it == metadata.end() ? std::string_view()
                                : std::string_view(it->second.data(), it->second.size());
  };
  return limits_->ClientOf(context.peer(), value("x-forwarded-for"), value("x-ply-proxy"));
}

std::string PlayerKey(const grpc::CallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("x-ply-player");
  if (it == metadata.end()) return "";
  // Garbage stays garbage (PlayerOf refuses it), but is never empty.
  return it->second.empty() ? "-" : std::string(it->second.data(), it->second.size());
}

constexpr char kSlowDown[] = "too many calls from this client: slow down and retry";

bool LobbyServiceImpl::Admit(grpc::CallbackServerContext* context) {
  return limits_ == nullptr || limits_->AllowCall(ClientOf(*context));
}

bool LobbyServiceImpl::Admit(grpc::CallbackServerContext* context,
                             grpc::ServerUnaryReactor* reactor, Method method) {
  if (Admit(context)) return true;
  Finish(reactor, method, grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, kSlowDown));
  return false;
}

void LobbyServiceImpl::Finish(grpc::ServerUnaryReactor* reactor, Method method,
                              const grpc::Status& status) {
  lobby_->metrics().CountCall(method, status.error_code());
  reactor->Finish(status);
}

template <class Work>
grpc::ServerUnaryReactor* LobbyServiceImpl::Offload(grpc::CallbackServerContext* context,
                                                    Method method, Work work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, method)) return reactor;
  Post(reactor, method, std::move(work));
  return reactor;
}

template <class Work>
void LobbyServiceImpl::Post(grpc::ServerUnaryReactor* reactor, Method method, Work work) {
  // The request and response live until Finish, so the task may use them.
  if (!executor_->Post([this, reactor, method, work = std::move(work)]() mutable {
        Finish(reactor, method, ToGrpcStatus(work()));
      })) {
    Finish(reactor, method,
           grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "the lobby is overloaded: try again shortly"));
  }
}

// Copies a StatusOr's value into the response and returns its status.
template <class T>
absl::Status Into(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return result.status();
  *response = *std::move(result);
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* LobbyServiceImpl::ListGames(grpc::CallbackServerContext* context,
                                                      const v1::ListGamesRequest*,
                                                      v1::ListGamesResponse* response) {
  // The bots' live ratings come from the database: on the executor.
  return Offload(context, Method::kListGames, [=, this] {
    *response = lobby_->ListGames();
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::CreateMatch(grpc::CallbackServerContext* context,
                                                        const v1::CreateMatchRequest* request,
                                                        v1::CreateMatchResponse* response) {
  // Quotas count against the client, unless it is exempt from the per-client limits.
  std::string client = ClientOf(*context);
  if (limits_ == nullptr || limits_->Exempt(client)) client.clear();
  std::string player = PlayerKey(*context);
  return Offload(context, Method::kCreateMatch, [=, this] {
    return Into(lobby_->CreateMatch(*request, client, player), response);
  });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::ListMatches(grpc::CallbackServerContext* context,
                                                        const v1::ListMatchesRequest* request,
                                                        v1::ListMatchesResponse* response) {
  return Offload(context, Method::kListMatches,
                 [=, this] { return Into(lobby_->ListMatches(*request), response); });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::GetMatch(grpc::CallbackServerContext* context,
                                                     const v1::GetMatchRequest* request,
                                                     v1::Match* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, Method::kGetMatch)) return reactor;
  // A match in memory is answered at once; otherwise it is loaded on the executor.
  if (lobby_->TryGetMatch(request->match_id(), response)) {
    Finish(reactor, Method::kGetMatch, grpc::Status::OK);
    return reactor;
  }
  Post(reactor, Method::kGetMatch,
       [=, this] { return Into(lobby_->GetMatch(request->match_id()), response); });
  return reactor;
}

grpc::ServerUnaryReactor* LobbyServiceImpl::JoinMatch(grpc::CallbackServerContext* context,
                                                      const v1::JoinMatchRequest* request,
                                                      v1::JoinMatchResponse* response) {
  std::string player = PlayerKey(*context);
  return Offload(context, Method::kJoinMatch,
                 [=, this] { return Into(lobby_->JoinMatch(*request, player), response); });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::Login(grpc::CallbackServerContext* context,
                                                  const v1::LoginRequest* request,
                                                  v1::LoginResponse* response) {
  std::string player = PlayerKey(*context);
  // Registrations are bounded per address, unless the client is exempt from the limits.
  std::string client = ClientOf(*context);
  if (limits_ == nullptr || limits_->Exempt(client)) client.clear();
  return Offload(context, Method::kLogin,
                 [=, this] { return Into(lobby_->Login(*request, player, client), response); });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::GetPlayer(grpc::CallbackServerContext* context,
                                                      const v1::GetPlayerRequest* request,
                                                      v1::Player* response) {
  return Offload(context, Method::kGetPlayer,
                 [=, this] { return Into(lobby_->GetPlayer(*request), response); });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::ListPlayerMatches(
    grpc::CallbackServerContext* context, const v1::ListPlayerMatchesRequest* request,
    v1::ListMatchesResponse* response) {
  return Offload(context, Method::kListPlayerMatches,
                 [=, this] { return Into(lobby_->ListPlayerMatches(*request), response); });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::Leaderboard(grpc::CallbackServerContext* context,
                                                        const v1::LeaderboardRequest* request,
                                                        v1::LeaderboardResponse* response) {
  return Offload(context, Method::kLeaderboard,
                 [=, this] { return Into(lobby_->Leaderboard(*request), response); });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::MakeMove(grpc::CallbackServerContext* context,
                                                     const v1::MakeMoveRequest* request,
                                                     v1::MakeMoveResponse* response) {
  std::string token = BearerToken(*context);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, Method::kMakeMove)) return reactor;
  const absl::Time start = absl::Now();
  // The common case commits without a thread hand-off; the rest (errors, reloads, a busy
  // match) takes the executor like every other call.
  auto done = [this, reactor, response, start](absl::StatusOr<v1::MakeMoveResponse> result) {
    lobby_->metrics().make_move_ms.Observe(absl::ToDoubleMilliseconds(absl::Now() - start));
    Finish(reactor, Method::kMakeMove, ToGrpcStatus(Into(std::move(result), response)));
  };
  if (lobby_->TryMakeMove(*request, token, done)) return reactor;
  // The executor's thread is not held while the move is committed, unless MakeMove has to
  // decide (an error, a busy match).
  if (!executor_->Post(
          [this, request, token, done] { lobby_->MakeMoveAsync(*request, token, done); })) {
    Finish(reactor, Method::kMakeMove,
           grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "the lobby is overloaded: try again shortly"));
  }
  return reactor;
}

grpc::ServerUnaryReactor* LobbyServiceImpl::Resign(grpc::CallbackServerContext* context,
                                                   const v1::ResignRequest* request,
                                                   v1::Match* response) {
  std::string token = BearerToken(*context);
  return Offload(context, Method::kResign,
                 [=, this] { return Into(lobby_->Resign(request->match_id(), token), response); });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::OfferDraw(grpc::CallbackServerContext* context,
                                                      const v1::OfferDrawRequest* request,
                                                      v1::Match* response) {
  std::string token = BearerToken(*context);
  return Offload(context, Method::kOfferDraw, [=, this] {
    return Into(lobby_->OfferDraw(request->match_id(), token), response);
  });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::Here(grpc::CallbackServerContext* context,
                                                 const v1::HereRequest* request,
                                                 v1::HereResponse* response) {
  std::string token = BearerToken(*context);
  return Offload(context, Method::kHere,
                 [=, this] { return Into(lobby_->Here(request->match_id(), token), response); });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::ClaimVictory(grpc::CallbackServerContext* context,
                                                         const v1::ClaimVictoryRequest* request,
                                                         v1::Match* response) {
  std::string token = BearerToken(*context);
  return Offload(context, Method::kClaimVictory, [=, this] {
    return Into(lobby_->ClaimVictory(request->match_id(), request->draw(), token), response);
  });
}

grpc::ServerUnaryReactor* LobbyServiceImpl::OfferRematch(grpc::CallbackServerContext* context,
                                                         const v1::OfferRematchRequest* request,
                                                         v1::OfferRematchResponse* response) {
  std::string token = BearerToken(*context);
  return Offload(context, Method::kOfferRematch,
                 [=, this] { return Into(lobby_->OfferRematch(*request, token), response); });
}

namespace {

// The lobby's side of one watch stream (shared with the lobby, which may outlive the RPC) and
// the reactor that writes it: events wait in a bounded queue (events/write_queue.h), numbered as
// they are queued; one write is in flight at a time.
void StampSequence(v1::MatchEvent& event, int64_t sequence) { event.set_sequence(sequence); }

class Watcher final : public EventSink {
 public:
  Watcher(grpc::ServerWriteReactor<v1::MatchEvent>* stream, int capacity, LobbyMetrics* metrics)
      : writes_(stream, metrics, Method::kWatchMatch,
                {.stamp = &StampSequence,
                 .capacity = capacity,
                 .overflow = "this watcher fell too far behind; reconnect with after_ply"}) {}
  bool Push(v1::MatchEvent event) override { return writes_.Send(std::move(event)); }
  void Close(const absl::Status& status) override { writes_.Finish(status); }
  bool FollowsRematch() const override { return follows_rematch_; }
  bool Closed() override { return writes_.Closed(); }
  void set_follows_rematch(bool follows) { follows_rematch_ = follows; }
  // Runs `fn` once the RPC is over (at once if it is).
  void WhenDone(std::function<void()> fn) { writes_.WhenDone(std::move(fn)); }
  WriteQueue<v1::MatchEvent>& writes() { return writes_; }

 private:
  WriteQueue<v1::MatchEvent> writes_;
  bool follows_rematch_ = false;
};

using WatchStream = QueuedStream<v1::MatchEvent, Watcher>;

}  // namespace

namespace {

// One Pair stream: a few events (waiting, a bot offer, the pairing), written one at a time; the
// lobby's handle on it may outlive the RPC.
class PairWrites final : public PairSink {
 public:
  PairWrites(grpc::ServerWriteReactor<v1::PairEvent>* stream, LobbyMetrics* metrics)
      : writes_(stream, metrics, Method::kPair) {}
  bool Send(v1::PairEvent event) override { return writes_.Send(std::move(event)); }
  void Finish(const absl::Status& status) override { writes_.Finish(status); }
  bool Gone() override { return writes_.Gone(); }
  void OnGone(std::function<void()> fn) override { writes_.OnGone(std::move(fn)); }
  WriteQueue<v1::PairEvent>& writes() { return writes_; }

 private:
  WriteQueue<v1::PairEvent> writes_;
};
using PairStream = QueuedStream<v1::PairEvent, PairWrites>;

}  // namespace

bool LobbyServiceImpl::TakeStreamSlot(const grpc::CallbackServerContext& context,
                                      std::function<void()>* release) {
  if (limits_ == nullptr) return true;
  std::string client = ClientOf(context);
  if (!limits_->OpenStream(client)) return false;
  *release = [limits = limits_, client = std::move(client)] { limits->CloseStream(client); };
  return true;
}

grpc::ServerWriteReactor<v1::PairEvent>* LobbyServiceImpl::Pair(
    grpc::CallbackServerContext* context, const v1::PairRequest* request) {
  auto* stream = new PairStream(&lobby_->metrics());
  std::shared_ptr<PairWrites> sink = stream->sink();
  if (!Admit(context)) {
    sink->Finish(absl::ResourceExhaustedError(kSlowDown));
    return stream;
  }
  // A Pair stream is held open as long as a watch and counts against the same cap, whichever
  // player key it carries (one address may hold many keys).
  if (!HoldStreamSlot(*context, stream, *sink)) return stream;
  const std::string player = PlayerKey(*context);
  v1::PairRequest copy = *request;
  if (!executor_->Post([this, sink, player, copy] {
        absl::Status s = lobby_->Pair(copy, player, sink);
        if (!s.ok()) sink->Finish(s);
      })) {
    sink->Finish(absl::ResourceExhaustedError("the lobby is overloaded: try again shortly"));
  }
  return stream;
}

grpc::ServerWriteReactor<v1::MatchEvent>* LobbyServiceImpl::WatchMatch(
    grpc::CallbackServerContext* context, const v1::WatchMatchRequest* request) {
  const bool admitted = Admit(context);
  std::function<void()> release;
  const bool slot = admitted && TakeStreamSlot(*context, &release);
  auto* stream = new WatchStream(watcher_queue_, &lobby_->metrics());
  stream->set_on_done(std::move(release));
  std::shared_ptr<Watcher> watcher = stream->sink();
  watcher->set_follows_rematch(request->follow_rematch());
  if (!admitted) {
    watcher->Close(absl::ResourceExhaustedError(kSlowDown));
    return stream;
  }
  if (!slot) {
    watcher->Close(absl::ResourceExhaustedError(
        "this client has too many watch streams open: close some first"));
    return stream;
  }
  std::optional<int> after;
  if (request->has_after_ply()) after = request->after_ply();
  const int64_t id = request->match_id();
  // A seat holder's stream (its token in the metadata) holds the seat's presence until it ends.
  const std::string token = BearerToken(*context);
  if (!executor_->Post([this, watcher, id, after, token] {
        int seat = -1;
        absl::Status s = lobby_->Watch(id, after, watcher, token, &seat);
        if (!s.ok()) watcher->Close(s);
        if (seat >= 0)
          watcher->WhenDone([lobby = lobby_, id, seat] { lobby->WatchEnded(id, seat); });
      })) {
    watcher->Close(absl::ResourceExhaustedError("the lobby is overloaded: try again shortly"));
  }
  return stream;
}

grpc::ServerWriteReactor<v1::AnalyzeMatchEvent>* LobbyServiceImpl::AnalyzeMatch(
    grpc::CallbackServerContext* context, const v1::AnalyzeMatchRequest* request) {
  auto* stream = new AnalyzeStream(&lobby_->metrics());
  std::shared_ptr<AnalysisWrites> sink = stream->sink();
  if (!Admit(context)) {
    sink->Finish(absl::ResourceExhaustedError("too many calls from this client: slow down"));
    return stream;
  }
  if (analyzer_ == nullptr) {
    sink->Finish(absl::UnavailableError("this lobby does not analyse matches"));
    return stream;
  }
  // An analysis stream (one waiting for another's analysis too) is held open like a watch and
  // counts against the same per-client cap.
  if (!HoldStreamSlot(*context, stream, *sink)) return stream;
  const int64_t id = request->match_id();
  const bool stored_only = request->stored_only();
  AnalysisClient client{.address = ClientOf(*context), .player = PlayerKey(*context)};
  client.exempt = limits_ != nullptr && limits_->Exempt(client.address);
  if (!executor_->Post([analyzer = analyzer_, sink, id, stored_only, client] {
        absl::Status s = analyzer->Analyze(id, stored_only, sink, client);
        if (!s.ok()) sink->Finish(s);
      })) {
    sink->Finish(absl::ResourceExhaustedError("the lobby is overloaded: try again shortly"));
  }
  return stream;
}

}  // namespace ply::lobby
