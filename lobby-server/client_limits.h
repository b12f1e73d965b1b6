// Per-client limits, so that one client flooding the lobby with calls or watch streams is refused
// (RESOURCE_EXHAUSTED) without slowing anyone else. A client is its IP address (the port differs
// per connection, and a flood may use many). Calls draw from a token bucket per client; watch
// streams are counted per client while they are open. Trusted addresses may be exempted.
#ifndef PLY_LOBBY_SERVER_CLIENT_LIMITS_H_
#define PLY_LOBBY_SERVER_CLIENT_LIMITS_H_

#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ply::lobby {

struct ClientLimitOptions {
  // Sustained calls per second per client, and how many may come at once; 0 turns it off.
  double calls_per_second = 500;
  double burst = 1000;
  // Watch streams open at once per client; 0 turns it off.
  int max_streams = 100;
  // Client addresses the limits do not apply to (e.g. "127.0.0.1", "::1").
  std::set<std::string> exempt;
};

class ClientLimits {
 public:
  explicit ClientLimits(ClientLimitOptions options) : options_(std::move(options)) {}

  // "ipv4:10.1.2.3:5678" -> "10.1.2.3", "ipv6:[::1]:5678" -> "::1"; IPv4 clients reaching an
  // IPv6 socket ("ipv6:[::ffff:10.1.2.3]:5678") count as their IPv4 address.
  static std::string ClientOf(std::string_view peer);

  // Takes a token for one call; false when the client is over its rate.
  bool AllowCall(const std::string& client, absl::Time now = absl::Now());
  // Counts a stream as open; false (and nothing counted) when the client has too many.
  bool OpenStream(const std::string& client);
  void CloseStream(const std::string& client);

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time refilled;
    int streams = 0;
  };
  // Forgets clients that have been quiet long enough to have a full bucket and no stream.
  void Prune(absl::Time now);

  const ClientLimitOptions options_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> clients_;
  absl::Time last_prune_ = absl::InfinitePast();
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_CLIENT_LIMITS_H_
