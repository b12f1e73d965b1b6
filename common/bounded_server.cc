#include "common/bounded_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <utility>

#include "absl/time/clock.h"
#include "common/log_text.h"

namespace ply {
namespace {

// Waits up to `ms` for `events` on `fd`; true when they came.
bool Wait(int fd, short events, int ms) {
  pollfd p{.fd = fd, .events = events, .revents = 0};
  int n;
  do {
    n = poll(&p, 1, ms);
  } while (n < 0 && errno == EINTR);
  return n > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
}

int Millis(time_t s, time_t us) { return static_cast<int>(s * 1000 + us / 1000); }

bool Address(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  const int got = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length)
                       : getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  if (got != 0) return false;
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host, sizeof(host), service,
                  sizeof(service), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return false;
  }
  ip = host;
  port = std::atoi(service);
  return true;
}

// A socket stream (buffered reads, like httplib's own) whose reads stop once the current request
// has spent its byte budget or passed its deadline.
class BoundedStream : public httplib::Stream {
 public:
  // `pressure`: whether the server is under pressure now, when a request's deadline is the
  // earlier of its own and `pressure_deadline` after its first byte.
  BoundedStream(int fd, int read_ms, int write_ms, std::function<bool()> pressure,
                absl::Duration pressure_deadline)
      : fd_(fd),
        read_ms_(read_ms),
        write_ms_(write_ms),
        pressure_(std::move(pressure)),
        pressure_deadline_(pressure_deadline) {}

  void StartRequest(size_t budget, absl::Time deadline) {
    budget_ = budget;
    deadline_ = deadline;
    started_ = absl::Now();
  }
  bool Buffered() const { return pos_ < end_; }
  // The connection ends after the current answer (its framing cannot be trusted).
  void CloseAfterAnswer() { close_after_ = true; }
  bool ClosesAfterAnswer() const { return close_after_; }
  // Whether a read was refused for the budget or the deadline (the connection is then done).
  bool Cut() const { return cut_; }

  bool is_readable() const override { return Buffered() || Wait(fd_, POLLIN, read_ms_); }
  bool is_writable() const override {
    if (!Wait(fd_, POLLOUT, write_ms_)) return false;
    // A peer that closed its end is gone even while the socket still takes writes.
    char byte;
    const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }

  ssize_t read(char* ptr, size_t size) override {
    if (budget_ == 0) {
      cut_ = true;
      return -1;
    }
    size = std::min(size, budget_);
    if (!Buffered()) {
      const absl::Time deadline =
          pressure_() ? std::min(deadline_, started_ + pressure_deadline_) : deadline_;
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        cut_ = true;
        return -1;
      }
      const int ms = std::min<int64_t>(read_ms_, absl::ToInt64Milliseconds(left) + 1);
      if (!Wait(fd_, POLLIN, ms)) {
        cut_ = true;  // a request that stalls, or runs out of time while waiting, ends here
        return -1;
      }
      ssize_t n;
      do {
        n = recv(fd_, buffer_, sizeof(buffer_), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      pos_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - pos_);
    std::copy(buffer_ + pos_, buffer_ + pos_ + n, ptr);
    pos_ += n;
    budget_ -= n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!Wait(fd_, POLLOUT, write_ms_)) return -1;
    ssize_t n;
    do {
      n = send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    Address(fd_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    Address(fd_, false, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  const int fd_;
  const int read_ms_;
  const int write_ms_;
  const std::function<bool()> pressure_;
  const absl::Duration pressure_deadline_;
  size_t budget_ = 0;
  absl::Time deadline_;
  absl::Time started_;
  char buffer_[4096];
  size_t pos_ = 0;
  size_t end_ = 0;
  bool cut_ = false;
  bool close_after_ = false;
};

// What BoundedServer changes in a parsed request before it is routed.
void Sanitize(httplib::Request& req, BoundedStream& stream) {
  // One range is answered as one part; several would each hold the whole answer.
  if (req.get_header_value("Range").find(',') != std::string::npos) {
    req.headers.erase("Range");
    req.ranges.clear();
  }
  // httplib reads such a body as chunked (as RFC 9112 says to), but a proxy in front may have
  // read it by its length: what follows on the connection is not to be trusted.
  if (req.has_header("Transfer-Encoding") && req.has_header("Content-Length")) {
    req.headers.erase("Content-Length");
    req.headers.erase("Connection");
    req.headers.emplace("Connection", "close");  // the answer says so
    stream.CloseAfterAnswer();
  }
  // A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112, 6.3),
  // as `curl -X POST` sends it; httplib would read one until its timeout and answer 400.
  if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) {
    req.headers.emplace("Content-Length", "0");
  }
}

}  // namespace

BoundedServer::BoundedServer(ConnectionLimits limits) : limits_(std::move(limits)) {
  set_payload_max_length(64 * 1024);
  // Without a handler httplib puts the exception's text in an EXCEPTION_WHAT header of the 500.
  set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr thrown) {
        static LogRateLimit limit(5, absl::Seconds(10));
        std::string what = "unknown";
        try {
          std::rethrow_exception(thrown);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        int64_t suppressed = 0;
        if (limit.Allow(&suppressed)) {
          std::fprintf(stderr, "http: %s %s failed: %s (%lld like it not logged)\n",
                       req.method.c_str(), LogQuote(req.path).c_str(), LogQuote(what, 200).c_str(),
                       static_cast<long long>(suppressed));
        }
        res.status = 500;
        res.set_content("{\"error\":\"internal error\"}", "application/json");
      });
}

bool BoundedServer::UnderPressure() const {
  return limits_.threads > 0 && serving_.load(std::memory_order_relaxed) * 4 >= limits_.threads * 3;
}

bool BoundedServer::Admit(const std::string& address) {
  if (limits_.per_client <= 0) return true;
  std::lock_guard<std::mutex> lock(mu_);
  int& open = open_[address];
  if (open >= limits_.per_client) return false;
  ++open;
  return true;
}

void BoundedServer::Release(const std::string& address) {
  if (limits_.per_client <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = open_.find(address);
  if (it != open_.end() && --it->second <= 0) open_.erase(it);
}

// httplib's own loop (keep-alive requests on one connection, until the client stops, the count
// is spent or the server stops), over a BoundedStream.
bool BoundedServer::process_and_close_socket(socket_t sock) {
  serving_.fetch_add(1, std::memory_order_relaxed);
  BoundedStream stream(
      sock, Millis(read_timeout_sec_, read_timeout_usec_),
      Millis(write_timeout_sec_, write_timeout_usec_), [this] { return UnderPressure(); },
      limits_.pressure_deadline);
  std::string ip;
  int port = 0;
  Address(sock, true, ip, port);
  if (limits_.client_key) ip = limits_.client_key(ip);
  bool ok = false;
  if (Admit(ip)) {
    const size_t budget = limits_.max_head + std::min(payload_max_length_, size_t{1} << 30);
    for (size_t count = keep_alive_max_count_; count > 0 && svr_sock_ != INVALID_SOCKET; --count) {
      // Waits for the next request, a slice at a time so that a stopping server is seen.
      bool ready = stream.Buffered();
      // Under pressure a connection's first request has the pressure deadline to begin, and
      // a later one a tenth of a second: an idle connection is not worth a thread then.
      const bool first = count == keep_alive_max_count_;
      const int64_t pressed_ms = first ? absl::ToInt64Milliseconds(limits_.pressure_deadline) : 100;
      for (int waited = 0; !ready && waited < keep_alive_timeout_sec_ * 1000; waited += 100) {
        if (svr_sock_ == INVALID_SOCKET || (waited >= pressed_ms && UnderPressure())) break;
        ready = Wait(sock, POLLIN, 100);
      }
      if (!ready) break;
      stream.StartRequest(budget, absl::Now() + limits_.request_deadline);
      bool closed = false;
      ok = process_request(stream, count == 1, closed,
                           [&stream](httplib::Request& req) { Sanitize(req, stream); });
      if (!ok || closed || stream.Cut() || stream.ClosesAfterAnswer()) break;
    }
    Release(ip);
  }
  shutdown(sock, SHUT_RDWR);
  close(sock);
  serving_.fetch_sub(1, std::memory_order_relaxed);
  return ok;
}

}  // namespace ply
