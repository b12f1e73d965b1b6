// Per-client limits, so that one client flooding the lobby with calls or watch streams is refused
// (RESOURCE_EXHAUSTED) without slowing anyone else. A client is its IP address (the port differs
// per connection, and a flood may use many), and an IPv6 client its /64 (one subscriber usually
// holds a whole /64 and may use any address in it). Behind a load balancer or proxy the
// connection comes from the proxy: when the peer is one of the trusted proxies, the client is
// the address that proxy forwarded (x-forwarded-for; the rightmost entry that is not itself a
// trusted proxy, since entries to its left are the client's word only). Calls draw from a token
// bucket per client; watch streams are counted per client while they are open. Trusted
// addresses may be exempted. A proxy may prove itself by a shared secret instead of its address
// (ply-web's x-ply-proxy, --proxy_token_file: the shipped deployments cannot know the addresses
// their web instances get): its x-forwarded-for is then believed too, and its calls without one
// (ply-web's own shared match feeds) are its own and not limited; ply-web bounds them per
// browser itself.
#ifndef PLY_LOBBY_SERVER_CLIENT_LIMITS_H_
#define PLY_LOBBY_SERVER_CLIENT_LIMITS_H_

#include <array>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/client_budget.h"

namespace ply::lobby {

struct ClientLimitOptions {
  // Sustained calls per second per client, and how many may come at once; 0 turns it off.
  double calls_per_second = 500;
  double burst = 1000;
  // Watch streams open at once per client; 0 turns it off.
  int max_streams = 100;
  // Client addresses the limits do not apply to (e.g. "127.0.0.1", "::1").
  std::set<std::string> exempt;
  // Proxies whose x-forwarded-for is believed: addresses or prefixes ("10.0.0.0/8", "fd00::/8").
  std::vector<std::string> trusted_proxies;
  // The secret a proxy sends as x-ply-proxy to be trusted whatever its address ("": none).
  std::string proxy_token;
};

// An address prefix ("10.0.0.0/8", "2001:db8::/32", or one address).
class AddressPrefix {
 public:
  // False when `text` is not an IPv4 or IPv6 address with an optional /bits.
  static bool Parse(std::string_view text, AddressPrefix* out);
  bool Contains(std::string_view address) const;

 private:
  int family_ = 0;
  std::array<unsigned char, 16> bytes_{};
  int bits_ = 0;
};

class ClientLimits {
 public:
  // Entries of trusted_proxies that do not parse are reported by Check; the constructor drops
  // them.
  explicit ClientLimits(ClientLimitOptions options);
  // The options' problems, if any (a trusted proxy that is no address or prefix).
  static std::string Check(const ClientLimitOptions& options);

  // "ipv4:10.1.2.3:5678" -> "10.1.2.3", "ipv6:[::1]:5678" -> "::1"; IPv4 clients reaching an
  // IPv6 socket ("ipv6:[::ffff:10.1.2.3]:5678") count as their IPv4 address.
  static std::string AddressOf(std::string_view peer);
  // The key a client address is limited by: IPv4 as it is, IPv6 as its /64 ("2001:db8:1:2::/64";
  // ClientAddressKey, shared with ply-web).
  static std::string KeyOf(std::string_view address);
  // The client of a call from `peer` with the x-forwarded-for metadata `forwarded` and the
  // x-ply-proxy metadata `proxy` ("" when absent), keyed as KeyOf; a proxy that proved itself
  // and forwarded nothing is kProxyPrefix + its own key.
  std::string ClientOf(std::string_view peer, std::string_view forwarded = "",
                       std::string_view proxy = "") const;
  static constexpr std::string_view kProxyPrefix = "proxy:";

  // Whether `client` (a key from ClientOf) is exempt from the limits and quotas.
  bool Exempt(const std::string& client) const {
    return exempt_.count(client) > 0 || client.rfind(kProxyPrefix, 0) == 0;
  }
  // The budget of ClientBudget, exempt clients aside: a token for one call (false when the
  // client is over its rate), a stream opened (false and nothing counted at the cap), closed.
  bool AllowCall(const std::string& client, absl::Time now = absl::Now()) {
    return Exempt(client) || budget_.AllowCall(client, now);
  }
  bool OpenStream(const std::string& client) {
    return Exempt(client) || budget_.OpenStream(client);
  }
  void CloseStream(const std::string& client) {
    if (!Exempt(client)) budget_.CloseStream(client);
  }

 private:
  const ClientLimitOptions options_;
  std::vector<AddressPrefix> proxies_;
  // options_.exempt, keyed as clients are.
  std::set<std::string> exempt_;
  ClientBudget budget_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_CLIENT_LIMITS_H_
