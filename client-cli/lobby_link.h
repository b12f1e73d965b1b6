// The client's side of the lobby's gRPC contract: unary calls with deadlines and errors as
// absl::Status (the lobby's sentence kept as the message), and a WatchMatch stream that runs on
// its own thread, reconnects with backoff (resuming with after_ply) and wakes the UI's poll()
// loop through a pipe whenever it has news.
#ifndef PLY_CLIENT_CLI_LOBBY_LINK_H_
#define PLY_CLIENT_CLI_LOBBY_LINK_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ply/v1/lobby.grpc.pb.h"

namespace ply::client {

class LobbyClient {
 public:
  // `credentials`: plaintext when null (see bot-service/credentials.h for TLS).
  explicit LobbyClient(std::string address,
                       std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);

  const std::string& address() const { return address_; }
  v1::LobbyService::Stub* stub() { return stub_.get(); }

  absl::StatusOr<v1::ListGamesResponse> ListGames();
  absl::StatusOr<v1::CreateMatchResponse> CreateMatch(const v1::CreateMatchRequest& request);
  absl::StatusOr<v1::ListMatchesResponse> ListMatches(const v1::ListMatchesRequest& request);
  absl::StatusOr<v1::Match> GetMatch(int64_t match_id);
  absl::StatusOr<v1::JoinMatchResponse> JoinMatch(const v1::JoinMatchRequest& request);
  absl::StatusOr<v1::MakeMoveResponse> MakeMove(const v1::MakeMoveRequest& request,
                                                const std::string& token);
  absl::StatusOr<v1::Match> Resign(int64_t match_id, const std::string& token);
  absl::StatusOr<v1::Match> OfferDraw(int64_t match_id, const std::string& token);

 private:
  std::string address_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::LobbyService::Stub> stub_;
};

// An error for people: the lobby's sentence, or what went wrong reaching it.
std::string Describe(const absl::Status& status, const std::string& address);

// One match's event stream, kept alive across connection losses.
class MatchStream {
 public:
  struct Item {
    // An event from the lobby.
    std::optional<v1::MatchEvent> event;
    // Something to tell the user ("connection lost; retrying in 2.0 s", "reconnected").
    std::string notice;
    // The stream is over: the match ended (ok) or cannot be watched (the error).
    bool ended = false;
    absl::Status error;
  };

  MatchStream(LobbyClient* lobby, int64_t match_id);
  ~MatchStream();
  MatchStream(const MatchStream&) = delete;
  MatchStream& operator=(const MatchStream&) = delete;

  // Readable while Take() has something.
  int wake_fd() const { return wake_[0]; }
  std::vector<Item> Take();

 private:
  void Run();
  void Push(Item item);
  // Sleeps up to `d`; false when the stream is being stopped.
  bool Wait(absl::Duration d);

  LobbyClient* lobby_;
  const int64_t match_id_;
  int wake_[2] = {-1, -1};
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  grpc::ClientContext* context_ = nullptr;  // the call in flight, to cancel it
  std::vector<Item> items_;
  std::thread thread_;
};

}  // namespace ply::client

#endif  // PLY_CLIENT_CLI_LOBBY_LINK_H_
