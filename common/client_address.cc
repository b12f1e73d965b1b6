#include "common/client_address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace ply {

std::string ClientAddressKey(std::string_view address) {
  const std::string text(address);
  unsigned char bytes[16];
  if (inet_pton(AF_INET6, text.c_str(), bytes) != 1) return text;
  static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char out[INET6_ADDRSTRLEN] = {};
  if (std::memcmp(bytes, kMapped, sizeof(kMapped)) == 0) {
    inet_ntop(AF_INET, bytes + 12, out, sizeof(out));
    return out;
  }
  std::fill(bytes + 8, bytes + 16, 0);
  inet_ntop(AF_INET6, bytes, out, sizeof(out));
  return std::string(out) + "/64";
}

std::string ClientNetworkKey(std::string_view key) {
  if (key.size() < 4 || key.substr(key.size() - 3) != "/64") return "";
  const std::string text(key.substr(0, key.size() - 3));
  unsigned char bytes[16];
  if (inet_pton(AF_INET6, text.c_str(), bytes) != 1) return "";
  std::fill(bytes + 6, bytes + 16, 0);
  char out[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, bytes, out, sizeof(out));
  return std::string(out) + "/48";
}

}  // namespace ply
