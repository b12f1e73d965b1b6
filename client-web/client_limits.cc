#include "client-web/client_limits.h"

#include <algorithm>

namespace ply::web {

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
