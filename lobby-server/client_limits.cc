#include "lobby-server/client_limits.h"

#include <algorithm>

namespace ply::lobby {

std::string ClientLimits::ClientOf(std::string_view peer) {
  std::string_view address = peer;
  if (address.rfind("ipv4:", 0) == 0 || address.rfind("ipv6:", 0) == 0) address.remove_prefix(5);
  if (!address.empty() && address.front() == '[') {
    const size_t close = address.find(']');
    address =
        address.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
    constexpr std::string_view kMapped = "::ffff:";
    if (address.rfind(kMapped, 0) == 0 && address.find('.') != std::string_view::npos) {
      address.remove_prefix(kMapped.size());
    }
    return std::string(address);
  }
  const size_t colon = address.rfind(':');
  return std::string(colon == std::string_view::npos ? address : address.substr(0, colon));
}

bool ClientLimits::AllowCall(const std::string& client, absl::Time now) {
  if (options_.calls_per_second <= 0 || options_.exempt.count(client) > 0) return true;
  std::lock_guard<std::mutex> lock(mu_);
  Prune(now);
  auto [it, added] = clients_.try_emplace(client);
  Bucket& b = it->second;
  if (added) {
    b.tokens = options_.burst;
    b.refilled = now;
  }
  b.tokens = std::min(options_.burst, b.tokens + absl::ToDoubleSeconds(now - b.refilled) *
                                                     options_.calls_per_second);
  b.refilled = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

bool ClientLimits::OpenStream(const std::string& client) {
  if (options_.max_streams <= 0 || options_.exempt.count(client) > 0) return true;
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = clients_.try_emplace(client);
  if (added) {
    it->second.tokens = options_.burst;
    it->second.refilled = absl::Now();
  }
  if (it->second.streams >= options_.max_streams) return false;
  ++it->second.streams;
  return true;
}

void ClientLimits::CloseStream(const std::string& client) {
  if (options_.max_streams <= 0 || options_.exempt.count(client) > 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = clients_.find(client);
  if (it != clients_.end() && it->second.streams > 0) --it->second.streams;
}

void ClientLimits::Prune(absl::Time now) {
  if (now - last_prune_ < absl::Minutes(1)) return;
  last_prune_ = now;
  const absl::Duration full =
      absl::Seconds(options_.calls_per_second > 0 ? options_.burst / options_.calls_per_second : 0);
  for (auto it = clients_.begin(); it != clients_.end();) {
    const bool idle = it->second.streams == 0 && now - it->second.refilled > full;
    it = idle ? clients_.erase(it) : std::next(it);
  }
}

}  // namespace ply::lobby
