#include "common/client_budget.h"

#include <algorithm>
#include <iterator>

#include "absl/time/clock.h"

namespace ply {

bool ClientBudget::AllowCall(const std::string& client, absl::Time now) {
  if (options_.calls_per_second <= 0) return true;
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

bool ClientBudget::OpenStream(const std::string& client) {
  if (options_.max_streams <= 0) return true;
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

void ClientBudget::CloseStream(const std::string& client) {
  if (options_.max_streams <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = clients_.find(client);
  if (it != clients_.end() && it->second.streams > 0) --it->second.streams;
}

size_t ClientBudget::tracked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return clients_.size();
}

void ClientBudget::Prune(absl::Time now) {
  if (now - last_prune_ < absl::Minutes(1)) return;
  last_prune_ = now;
  const absl::Duration full =
      absl::Seconds(options_.calls_per_second > 0 ? options_.burst / options_.calls_per_second : 0);
  for (auto it = clients_.begin(); it != clients_.end();) {
    const bool idle = it->second.streams == 0 && now - it->second.refilled > full;
    it = idle ? clients_.erase(it) : std::next(it);
  }
}

}  // namespace ply
