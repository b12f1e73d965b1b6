// The client an address stands for, shared by every per-client limit in ply (ply-lobby's
// ClientLimits, ply-web's gateway and HTTP connection caps), so that all of them count one
// client the same way.
#ifndef PLY_COMMON_CLIENT_ADDRESS_H_
#define PLY_COMMON_CLIENT_ADDRESS_H_

#include <string>
#include <string_view>

namespace ply {

// IPv4 as it is; an IPv4 address in IPv6 form (::ffff:a.b.c.d, as dual-stack sockets and
// proxies give them) as that IPv4 address; any other IPv6 address as its /64
// ("2001:db8:1:2::/64": one subscriber usually holds a whole /64 and may send from any address
// in it); anything that is no address unchanged.
std::string ClientAddressKey(std::string_view address);

// The network a client key (ClientAddressKey's) belongs to, where one holder easily has many
// such keys: an IPv6 /64's /48 ("2001:db8:1::/48", what a site or a free tunnel gets); "" for
// anything else (an IPv4 address costs its holder one each).
std::string ClientNetworkKey(std::string_view key);

}  // namespace ply

#endif  // PLY_COMMON_CLIENT_ADDRESS_H_
