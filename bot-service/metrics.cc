#include "bot-service/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "engine/core/percentile.h"

namespace ply::bot {

void SampleWindow::Add(double value) {
  std::lock_guard lock(mu_);
  if (samples_.size() < capacity_) {
    samples_.push_back(value);
  } else {
    samples_[next_] = value;
    next_ = (next_ + 1) % capacity_;
  }
}

double SampleWindow::Mean() const {
  std::lock_guard lock(mu_);
  if (samples_.empty()) return 0;
  return std::accumulate(samples_.begin(), samples_.end(), 0.0) /
         static_cast<double>(samples_.size());
}

double SampleWindow::Percentile(double p) const {
  std::vector<double> sorted;
  {
    std::lock_guard lock(mu_);
    sorted = samples_;
  }
  return ply::Percentile(std::move(sorted), p);
}

double SampleWindow::Max() const {
  std::lock_guard lock(mu_);
  return samples_.empty() ? 0 : *std::max_element(samples_.begin(), samples_.end());
}

}  // namespace ply::bot
