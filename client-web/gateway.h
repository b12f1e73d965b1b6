// ply-web's HTTP side: the page's files and the JSON API over the lobby's gRPC contract, with
// Server-Sent Events for live matches. Every answer carries the security headers; every request
// is checked (input_check.h) and counted against its client (common/client_budget.h) before the
// lobby hears of it. Holds no state a browser depends on: seat tokens stay in the browser, matches
// in the lobby.
#ifndef PLY_CLIENT_WEB_GATEWAY_H_
#define PLY_CLIENT_WEB_GATEWAY_H_

#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "client-web/presence_hold.h"
#include "client-web/watch_hub.h"
#include "common/client_budget.h"
#include "lobby-client/lobby_link.h"

namespace ply::web {

struct GatewayOptions {
  // Requests per second and burst per client address; event streams per client address.
  double client_rps = 20;
  double client_burst = 60;
  int client_streams = 16;
  // Event streams open at once, from everyone. Each holds a connection thread until it ends: at
  // this many, new streams are refused (503) so that threads stay free for other requests.
  int max_streams = 480;
  // Largest request body accepted.
  size_t max_body = 16 * 1024;
  // Seconds between keep-alive comments on an idle event stream (they also find closed ones).
  absl::Duration keepalive = absl::Seconds(15);
  // How long a match feed nobody reads is kept. At most twice max_streams feeds are kept (a
  // lobby stream and a thread each), the longest-unread going first past that.
  absl::Duration linger = absl::Seconds(30);
  // Take the client's address from the last X-Forwarded-For entry, the one the proxy in front
  // added (only behind a proxy that sets or appends it).
  bool trust_forwarded_for = false;
  // How long one "I am here" from a player's page keeps the seat present in the lobby (the page
  // beats at a third of it), and how many seats this instance holds at once.
  absl::Duration presence_hold = absl::Seconds(25);
  size_t max_presence_holds = 100;
};

class Gateway {
 public:
  // `credentials`: plaintext to the lobby when null.
  Gateway(client::LobbyTarget lobby, std::shared_ptr<grpc::ChannelCredentials> credentials,
          GatewayOptions options);
  // Adds every route, the limits and the headers to `server`.
  void Install(httplib::Server& server);
  WatchHub& hub() { return hub_; }

 private:
  // The browser's address (X-Forwarded-For's last hop when the proxy in front is trusted), and
  // the key the limits count it by (ClientAddressKey).
  std::string ClientAddress(const httplib::Request& req) const;
  std::string ClientOf(const httplib::Request& req) const;
  void Games(httplib::Response& res);
  void List(const httplib::Request& req, httplib::Response& res);
  void Get(const httplib::Request& req, httplib::Response& res);
  void Create(const httplib::Request& req, httplib::Response& res);
  void Join(const httplib::Request& req, httplib::Response& res);
  void Move(const httplib::Request& req, httplib::Response& res);
  void Resign(const httplib::Request& req, httplib::Response& res, bool draw);
  void Claim(const httplib::Request& req, httplib::Response& res);
  void Rematch(const httplib::Request& req, httplib::Response& res);
  void Presence(const httplib::Request& req, httplib::Response& res);
  // Players: register a name or check a key, a profile, a player's matches, a game's best.
  void Login(const httplib::Request& req, httplib::Response& res);
  void Player(const httplib::Request& req, httplib::Response& res);
  void PlayerMatches(const httplib::Request& req, httplib::Response& res);
  void Leaderboard(const httplib::Request& req, httplib::Response& res);
  // Quick pairing for a logged-in player, as server-sent events (see the definition).
  void Pair(const httplib::Request& req, httplib::Response& res);
  // Counts a long-lived response (an event stream) against the server's and the client's
  // bounds: the client's key, or nullopt with `res` already answered (503 or 429).
  std::optional<std::string> OpenStream(const httplib::Request& req, httplib::Response& res);
  // Gives back what OpenStream took.
  void CloseStream(const std::string& client);
  void Events(const httplib::Request& req, httplib::Response& res);
  // A finished match's analysis, made (or fetched) for the page: server-sent events "progress"
  // (the lobby's queue place, then positions judged), then "done" or "failed".
  void Analysis(const httplib::Request& req, httplib::Response& res);
  void Replay(const httplib::Request& req, httplib::Response& res);
  // The rendered board of a listed match with `plies` moves, from a cache or the lobby.
  std::string BoardOf(int64_t id, int plies);

  client::LobbyClient lobby_;
  const GatewayOptions options_;
  ClientBudget limits_;
  WatchHub hub_;
  PresenceHolds presence_;
  std::atomic<int> streams_{0};
  std::mutex mu_;
  std::string games_json_;
  // Match id -> (moves played, rendered board).
  std::map<int64_t, std::pair<int, std::string>> boards_;
  // Recent list answers by request: every visitor's list page asks every two seconds, and the
  // lobby counts this gateway as one client.
  std::map<std::string, std::pair<absl::Time, std::string>> lists_;
};

}  // namespace ply::web

#endif  // PLY_CLIENT_WEB_GATEWAY_H_
