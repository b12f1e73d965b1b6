// What an operator reads about one ply-bot instance: request counters, current load, search
// times and the time a cancelled search takes to free its worker. ply-bot serves these through
// the BotService.GetMetrics RPC, both as fields and as Prometheus text.
#ifndef PLY_BOT_SERVICE_METRICS_H_
#define PLY_BOT_SERVICE_METRICS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace ply::bot {

// Percentiles over the last `capacity` samples.
class SampleWindow {
 public:
  explicit SampleWindow(size_t capacity) : capacity_(capacity) {}
  void Add(double value);
  // Mean and the p-th percentile (p in [0, 100]) of the samples in the window; 0 when empty.
  double Mean() const;
  double Percentile(double p) const;
  double Max() const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::vector<double> samples_;
  size_t next_ = 0;
};

struct Metrics {
  std::atomic<int64_t> requests{0};
  std::atomic<int64_t> succeeded{0};
  std::atomic<int64_t> invalid{0};
  std::atomic<int64_t> rejected{0};
  std::atomic<int64_t> rejected_background{0};
  std::atomic<int64_t> cancelled{0};
  std::atomic<int64_t> unauthenticated{0};
  std::atomic<int64_t> unavailable{0};
  std::atomic<int64_t> in_flight{0};
  // Totals over answered searches, for nodes per second.
  std::atomic<int64_t> total_nodes{0};
  std::atomic<int64_t> total_search_us{0};
  std::atomic<int64_t> searches{0};
  SampleWindow search_ms{4096};
  SampleWindow cancel_to_free_ms{1024};

  void RecordSearch(double elapsed_ms, int64_t nodes) {
    search_ms.Add(elapsed_ms);
    ++searches;
    total_nodes += nodes;
    total_search_us += static_cast<int64_t>(elapsed_ms * 1000);
  }
  double NodesPerSecond() const {
    int64_t us = total_search_us.load();
    return us > 0 ? static_cast<double>(total_nodes.load()) * 1e6 / static_cast<double>(us) : 0;
  }
};

}  // namespace ply::bot

#endif  // PLY_BOT_SERVICE_METRICS_H_
