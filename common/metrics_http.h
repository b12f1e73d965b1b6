// The Prometheus text endpoint both servers offer: GET /metrics on its own plain-HTTP port
// (Prometheus scrapes HTTP), served by cpp-httplib on a thread of its own.
#ifndef PLY_COMMON_METRICS_HTTP_H_
#define PLY_COMMON_METRICS_HTTP_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ply {

class MetricsEndpoint {
 public:
  // Serves `page()` at GET /metrics on host:port (port 0: a free one). The page function runs
  // on the endpoint's thread.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const std::string& host, int port,
                                                                std::function<std::string()> page);
  ~MetricsEndpoint();
  int port() const { return port_; }

 private:
  struct Impl;
  explicit MetricsEndpoint(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_;
};

}  // namespace ply

#endif  // PLY_COMMON_METRICS_HTTP_H_
