// The client's side of the lobby's gRPC contract: unary calls with deadlines and errors as
// absl::Status (the lobby's sentence kept as the message), and a WatchMatch stream that runs on
// its own thread, reconnects with backoff (resuming with after_ply) and wakes the UI's poll()
// loop through a pipe whenever it has news. The lobby may be several instances (any of them
// serves any call): calls are spread round-robin over their addresses and a call that finds an
// instance gone (UNAVAILABLE) is tried again on another.
#ifndef PLY_LOBBY_CLIENT_LOBBY_LINK_H_
#define PLY_LOBBY_CLIENT_LOBBY_LINK_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
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

// What `--server` names, as a gRPC channel target.
struct LobbyTarget {
  // For grpc::CreateChannel: one HOST:PORT or a target with a scheme ("dns:///lobby:50050") as
  // given; several HOST:PORT, comma-separated, as one ipv4: (or ipv6:) list of their addresses,
  // names resolved once, here.
  std::string target;
  // For a list: the first entry, the name a TLS certificate is checked against. Else empty.
  std::string authority;
  // The same lobby however its list is ordered: the entries, sorted, comma-separated.
  std::string key;
};
absl::StatusOr<LobbyTarget> ParseServers(const std::string& servers);

// The channel's service config: round_robin over every address, and a call that fails with
// UNAVAILABLE (an instance gone, or a lobby without its database) tried again, on another
// instance where there is one.
const char* LobbyServiceConfig();

// The person a gateway (ply-web) calls for on this thread: from now on, this thread's calls,
// and the seat streams it opens, carry `address` as x-forwarded-for ("" stops that), so that a
// lobby that trusts the gateway as a proxy (--trusted_proxies) applies its per-client rules
// (rates, streams, quotas, registrations) to each browser, not to the gateway as one client.
// A lobby that does not trust the gateway ignores it.
void SetForwardedFor(std::string address);
const std::string& ForwardedFor();
// The player a gateway calls for on this thread: calls made on it without a client-wide key
// (set_player_key) carry `key` as x-ply-player ("" stops that), so that a browser logged in as
// a player takes seats, pairs and is rated as that player.
void SetPlayerKeyFor(std::string key);
// The secret this process proves itself a proxy with (the lobby's --proxy_token_file): every
// call and stream from now on carries it as x-ply-proxy ("" stops that). Set once, before any
// call, by a gateway that forwards browsers' addresses.
void SetProxyCredential(std::string secret);

// Ends a streaming call from another thread: Cancel() cancels the call it is given to, at once
// if the call is under way, or as soon as it starts.
class CallCanceller {
 public:
  void Cancel();

 private:
  friend class LobbyClient;
  void Attach(grpc::ClientContext* context);
  void Detach();
  std::mutex mu_;
  grpc::ClientContext* context_ = nullptr;
  bool cancelled_ = false;
};

class LobbyClient {
 public:
  // `credentials`: plaintext when null (see bot-service/credentials.h for TLS).
  explicit LobbyClient(LobbyTarget target,
                       std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);

  // The lobby as people and the seat store name it (LobbyTarget::key).
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
  // The win (or a draw) when the opponent, to move in an untimed match, has gone long enough.
  absl::StatusOr<v1::Match> ClaimVictory(int64_t match_id, bool draw, const std::string& token);
  // The seat holder is here (a sign of life the lobby counts as a call), within `wait`.
  absl::StatusOr<v1::HereResponse> Here(int64_t match_id, const std::string& token,
                                        absl::Duration wait);
  // Offers (or accepts) a rematch of a finished match, or with `decline` withdraws or declines.
  absl::StatusOr<v1::OfferRematchResponse> OfferRematch(int64_t match_id, const std::string& token,
                                                        bool decline = false);
  // Calls carry this player's key (x-ply-player) from now on: seats taken are the player's.
  void set_player_key(std::string key) { player_key_ = std::move(key); }
  absl::StatusOr<v1::LoginResponse> Login(const std::string& name);
  absl::StatusOr<v1::Player> GetPlayer(const std::string& name);
  absl::StatusOr<v1::ListMatchesResponse> ListPlayerMatches(
      const v1::ListPlayerMatchesRequest& request);
  absl::StatusOr<v1::LeaderboardResponse> Leaderboard(const std::string& game, int limit);
  // Quick pairing: queues the player (whose key the call carries) and calls `on_event` with each
  // event until the lobby pairs them (the stream then ends: OK) or `on_event` returns false (the
  // player leaves the queue: CANCELLED), or `canceller` cancels it (CANCELLED). Waits up to
  // `wait`.
  absl::Status Pair(const v1::PairRequest& request,
                    const std::function<bool(const v1::PairEvent&)>& on_event,
                    absl::Duration wait = absl::Hours(1), CallCanceller* canceller = nullptr);
  // The analysis the lobby keeps for the match (AnalyzeMatch with stored_only): nullopt when it
  // has none; nothing is started.
  absl::StatusOr<std::optional<v1::MatchAnalysis>> StoredAnalysis(int64_t match_id);
  // Analyses the match (or gets its stored analysis), calling `on_progress` with each progress
  // event as it comes: its place in the lobby's queue, then positions judged. `on_progress`
  // returning false cancels the call (CANCELLED). Waits up to 15 minutes.
  absl::StatusOr<v1::MatchAnalysis> Analyze(
      int64_t match_id, const std::function<bool(const v1::AnalysisProgress&)>& on_progress);

 private:
  std::string address_;
  std::string player_key_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::LobbyService::Stub> stub_;
};

// An error for people: the lobby's sentence, or what went wrong reaching it (a name that does not
// resolve, nothing listening, a timeout, a failed TLS handshake), never gRPC's internals. A lobby
// that answered UNAVAILABLE (its database or bots away) is not called unreachable.
std::string Describe(const absl::Status& status, const std::string& address);
// Whether `status` is gRPC failing to reach the lobby (rather than the lobby's own answer).
bool ReachedNoLobby(const absl::Status& status);

// One match's event stream, kept alive across connection losses. Each move arrives once and in
// order, across reconnections to any instance: one already delivered is dropped, and a gap
// resumes from the last one delivered.
class MatchStream {
 public:
  struct Item {
    // An event from the lobby.
    std::optional<v1::MatchEvent> event;
    // Something to tell the user ("connection lost; retrying in 2.0 s", "reconnected").
    std::string notice;
    // The stream is over: the match ended (ok) or cannot be watched (the error, also when the
    // lobby could not be reached at all: retrying is for a connection that was up).
    bool ended = false;
    absl::Status error;
  };

  // With the seat's `token`, the stream tells the lobby (and so the opponent) that the seat's
  // player is here. `follow_rematch`: the stream stays after the end for the match's rematch
  // events, and ends after the one that names the rematch (a player's screen waits there for an
  // answer).
  MatchStream(LobbyClient* lobby, int64_t match_id, std::string token = "",
              bool follow_rematch = false);
  ~MatchStream();
  MatchStream(const MatchStream&) = delete;
  MatchStream& operator=(const MatchStream&) = delete;

  // Readable while Take() has something.
  int wake_fd() const { return wake_[0]; }
  std::vector<Item> Take();

 private:
  void Run();
  void Push(Item item);
  void CloseWake();
  // Sleeps up to `d`; false when the stream is being stopped.
  bool Wait(absl::Duration d);

  LobbyClient* lobby_;
  const int64_t match_id_;
  const std::string token_;
  const bool follow_rematch_;
  // A seat stream opened for a browser carries its address (SetForwardedFor).
  const std::string forwarded_for_;
  int wake_[2] = {-1, -1};
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  grpc::ClientContext* context_ = nullptr;  // the call in flight, to cancel it
  std::vector<Item> items_;
  std::thread thread_;
};

}  // namespace ply::client

#endif  // PLY_LOBBY_CLIENT_LOBBY_LINK_H_
