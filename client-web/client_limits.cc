#include "client-web/client_limits.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace ply::web {

std::string ClientKey(const std::string& address) {
  unsigned char bytes[16];
  if (inet_pton(AF_INET6, address.c_str(), bytes) != 1) return address;
  static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char text[INET6_ADDRSTRLEN] = {};
  if (std::memcmp(bytes, kMapped, sizeof(kMapped)) == 0) {
    inet_ntop(AF_INET, bytes + 12, text, sizeof(text));
    return text;
  }
  std::fill(bytes + 8, bytes + 16, 0);
  inet_ntop(AF_INET6, bytes, text, sizeof(text));
  return std::string(text) + "/64";
}

bool ClientLimits::Admit(const std::string& client, absl::Time now) {
  if (per_s_ <= 0) return true;
  std::lock_guard<std::mutex> lock(mu_);
  // Full buckets carry no information: dropping them now and then bounds the table by the
  // clients of the last minute.
  if (now - last_sweep_ > absl::Minutes(1)) {
    std::erase_if(buckets_, [&](const auto& e) {
      return e.second.tokens + absl::ToDoubleSeconds(now - e.second.at) * per_s_ >= burst_;
    });
    last_sweep_ = now;
  }
  auto [it, fresh] = buckets_.try_emplace(client, Bucket{.tokens = burst_, .at = now});
  Bucket& b = it->second;
  if (!fresh) {
    b.tokens = std::min(burst_, b.tokens + absl::ToDoubleSeconds(now - b.at) * per_s_);
    b.at = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

bool ClientLimits::OpenStream(const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  int& n = open_[client];
  if (streams_ > 0 && n >= streams_) {
    if (n == 0) open_.erase(client);
    return false;
  }
  ++n;
  return true;
}

void ClientLimits::Release(const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = open_.find(client);
  if (it != open_.end() && --it->second <= 0) open_.erase(it);
}

}  // namespace ply::web
