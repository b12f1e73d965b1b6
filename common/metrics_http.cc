#include "common/metrics_http.h"

#include <httplib.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/bounded_server.h"

namespace ply {

// A scraper makes one connection at a time and sends its request at once: a few more
// connections from one address are allowed, and a request that has not arrived whole within a
// second is dropped, so that slow connections cannot keep the scraper waiting.
// More workers than slow connections from a handful of addresses can hold, so that a scrape
// finds one free; from many addresses, three quarters of them busy halve the deadline.
constexpr int kMetricsThreads = 32;
const ConnectionLimits kMetricsLimits = {.request_deadline = absl::Seconds(1),
                                         .per_client = 4,
                                         .threads = kMetricsThreads,
                                         .pressure_deadline = absl::Milliseconds(500)};

struct MetricsEndpoint::Impl {
  BoundedServer server{kMetricsLimits};
  std::thread thread;
};

MetricsEndpoint::MetricsEndpoint(std::unique_ptr<Impl> impl, int port)
    : impl_(std::move(impl)), port_(port) {}

MetricsEndpoint::~MetricsEndpoint() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& host, int port, std::function<std::string()> page) {
  auto impl = std::make_unique<Impl>();
  impl->server.new_task_queue = [] { return new httplib::ThreadPool(kMetricsThreads); };
  impl->server.Get("/metrics",
                   [page = std::move(page)](const httplib::Request&, httplib::Response& res) {
                     res.set_content(page(), "text/plain; version=0.0.4");
                   });
  int bound = port;
  if (port == 0) {
    bound = impl->server.bind_to_any_port(host);
  } else if (!impl->server.bind_to_port(host, port)) {
    bound = -1;
  }
  if (bound <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", host, ":", port));
  }
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->server.listen_after_bind(); });
  return std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint(std::move(impl), bound));
}

}  // namespace ply
