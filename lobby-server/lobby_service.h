// The gRPC front of the lobby: ply.v1.LobbyService over the callback API. Handlers never block a
// gRPC thread: unary calls run on the lobby's executor (which talks to the database) and finish
// their reactor from there; WatchMatch streams are write reactors fed by the lobby through a
// bounded queue each.
#ifndef PLY_LOBBY_SERVER_LOBBY_SERVICE_H_
#define PLY_LOBBY_SERVER_LOBBY_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include "lobby-server/analysis/analyzer.h"
#include "lobby-server/client_limits.h"
#include "lobby-server/executor.h"
#include "lobby-server/lobby.h"
#include "ply/v1/lobby.grpc.pb.h"

namespace ply::lobby {

class LobbyServiceImpl final : public v1::LobbyService::CallbackService {
 public:
  // `limits` may be null (no per-client limits).
  LobbyServiceImpl(Lobby* lobby, Executor* executor, int watcher_queue, ClientLimits* limits)
      : lobby_(lobby), executor_(executor), watcher_queue_(watcher_queue), limits_(limits) {}

  grpc::ServerUnaryReactor* ListGames(grpc::CallbackServerContext* context,
                                      const v1::ListGamesRequest* request,
                                      v1::ListGamesResponse* response) override;
  grpc::ServerUnaryReactor* CreateMatch(grpc::CallbackServerContext* context,
                                        const v1::CreateMatchRequest* request,
                                        v1::CreateMatchResponse* response) override;
  grpc::ServerUnaryReactor* ListMatches(grpc::CallbackServerContext* context,
                                        const v1::ListMatchesRequest* request,
                                        v1::ListMatchesResponse* response) override;
  grpc::ServerUnaryReactor* GetMatch(grpc::CallbackServerContext* context,
                                     const v1::GetMatchRequest* request,
                                     v1::Match* response) override;
  grpc::ServerUnaryReactor* JoinMatch(grpc::CallbackServerContext* context,
                                      const v1::JoinMatchRequest* request,
                                      v1::JoinMatchResponse* response) override;
  grpc::ServerUnaryReactor* MakeMove(grpc::CallbackServerContext* context,
                                     const v1::MakeMoveRequest* request,
                                     v1::MakeMoveResponse* response) override;
  grpc::ServerUnaryReactor* Resign(grpc::CallbackServerContext* context,
                                   const v1::ResignRequest* request, v1::Match* response) override;
  grpc::ServerUnaryReactor* OfferDraw(grpc::CallbackServerContext* context,
                                      const v1::OfferDrawRequest* request,
                                      v1::Match* response) override;
  grpc::ServerUnaryReactor* OfferRematch(grpc::CallbackServerContext* context,
                                         const v1::OfferRematchRequest* request,
                                         v1::OfferRematchResponse* response) override;
  grpc::ServerUnaryReactor* Login(grpc::CallbackServerContext* context,
                                  const v1::LoginRequest* request,
                                  v1::LoginResponse* response) override;
  grpc::ServerUnaryReactor* GetPlayer(grpc::CallbackServerContext* context,
                                      const v1::GetPlayerRequest* request,
                                      v1::Player* response) override;
  grpc::ServerUnaryReactor* ListPlayerMatches(grpc::CallbackServerContext* context,
                                              const v1::ListPlayerMatchesRequest* request,
                                              v1::ListMatchesResponse* response) override;
  grpc::ServerUnaryReactor* Leaderboard(grpc::CallbackServerContext* context,
                                        const v1::LeaderboardRequest* request,
                                        v1::LeaderboardResponse* response) override;
  grpc::ServerUnaryReactor* Here(grpc::CallbackServerContext* context,
                                 const v1::HereRequest* request,
                                 v1::HereResponse* response) override;
  grpc::ServerUnaryReactor* ClaimVictory(grpc::CallbackServerContext* context,
                                         const v1::ClaimVictoryRequest* request,
                                         v1::Match* response) override;
  grpc::ServerWriteReactor<v1::PairEvent>* Pair(grpc::CallbackServerContext* context,
                                                const v1::PairRequest* request) override;
  grpc::ServerWriteReactor<v1::MatchEvent>* WatchMatch(
      grpc::CallbackServerContext* context, const v1::WatchMatchRequest* request) override;
  // Defined in analysis/analyze_stream.cc; UNAVAILABLE until set_analyzer.
  grpc::ServerWriteReactor<v1::AnalyzeMatchEvent>* AnalyzeMatch(
      grpc::CallbackServerContext* context, const v1::AnalyzeMatchRequest* request) override;
  void set_analyzer(Analyzer* analyzer) { analyzer_ = analyzer; }

 private:
  template <class Work>
  grpc::ServerUnaryReactor* Offload(grpc::CallbackServerContext* context, Method method, Work work);
  // Runs `work` on the executor and finishes `reactor` with its status.
  template <class Work>
  void Post(grpc::ServerUnaryReactor* reactor, Method method, Work work);
  // Finishes a unary call, counting it.
  void Finish(grpc::ServerUnaryReactor* reactor, Method method, const grpc::Status& status);

  // The client a call counts against (see ClientLimits).
  std::string ClientOf(const grpc::CallbackServerContext& context) const;
  // Whether the calling client is within its rate.
  bool Admit(grpc::CallbackServerContext* context);
  // Takes one of the calling client's stream slots (WatchMatch and Pair share its cap): false
  // when it holds them all; else `release` receives what gives the slot back when the stream
  // ends (nothing without limits).
  bool TakeStreamSlot(const grpc::CallbackServerContext& context, std::function<void()>* release);
  // TakeStreamSlot for a server stream whose `stream` gives the slot back when it is done
  // (set_on_done); false, with `sink` finished RESOURCE_EXHAUSTED, when the client has no slot.
  template <class Stream, class Sink>
  bool HoldStreamSlot(const grpc::CallbackServerContext& context, Stream* stream, Sink& sink) {
    std::function<void()> release;
    if (!TakeStreamSlot(context, &release)) {
      sink.Finish(
          absl::ResourceExhaustedError("this client has too many streams open: close some first"));
      return false;
    }
    stream->set_on_done(std::move(release));
    return true;
  }
  // The same for a unary call, finishing it with RESOURCE_EXHAUSTED when refused.
  bool Admit(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor,
             Method method);

  Lobby* lobby_;
  Executor* executor_;
  int watcher_queue_;
  ClientLimits* limits_;
  Analyzer* analyzer_ = nullptr;
};

// The seat token of a call: the "authorization: Bearer <token>" metadata, or "".
std::string BearerToken(const grpc::CallbackServerContext& context);
// The player key of a call: the "x-ply-player" metadata, or "".
std::string PlayerKey(const grpc::CallbackServerContext& context);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_LOBBY_SERVICE_H_
