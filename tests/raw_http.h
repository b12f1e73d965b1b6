// Raw TCP connections to the HTTP ports the tests start (ply-web, the /metrics ports), for what
// no well-behaved HTTP client sends: floods of header lines, requests a byte at a time; and
// HTTP/2 frames to the gRPC ports, for floods of frames no gRPC client sends.
#ifndef PLY_TESTS_RAW_HTTP_H_
#define PLY_TESTS_RAW_HTTP_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ply::testing {

// A raw connection to an HTTP port on 127.0.0.1, for what no well-behaved HTTP client sends.
class RawConnection {
 public:
  // From `source`, an IPv4 address of this machine (any of 127.0.0.0/8 on loopback): one
  // client of many.
  explicit RawConnection(int port, const char* source = nullptr)
      : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    if (source != nullptr) {
      sockaddr_in from{};
      from.sin_family = AF_INET;
      inet_pton(AF_INET, source, &from.sin_addr);
      bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof(from));
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() { close(fd_); }
  bool connected() const { return connected_; }
  // False once the server has closed its end (or reset it).
  bool Send(const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      const ssize_t n = send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  // Ends what this side sends (a body cut short), still reading the answer.
  void ShutdownWrite() { shutdown(fd_, SHUT_WR); }
  // What the server sends within `wait`, until it closes; "" when nothing came.
  std::string Receive(absl::Duration wait) {
    std::string out;
    const absl::Time end = absl::Now() + wait;
    char buffer[4096];
    while (absl::Now() < end) {
      pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      out.append(buffer, static_cast<size_t>(n));
    }
    return out;
  }
  // Starts a GET of `path` and sends header lines (64 KB at a time) until the server closes the
  // connection or `limit` bytes have gone; the bytes sent. cpp-httplib alone bounds each line,
  // not their number, so it reads them all (and keeps them).
  size_t FloodHeaders(const std::string& path, size_t limit) {
    if (!Send("GET " + path + " HTTP/1.1\r\nHost: x\r\n")) return 0;
    std::string chunk;
    for (int i = 0; i < 64; ++i) chunk += "X-Filler: " + std::string(1000, 'a') + "\r\n";
    size_t sent = 0;
    while (sent < limit && Send(chunk)) sent += chunk.size();
    return sent;
  }
  // True when the server has closed the connection (EOF or reset) within `wait`.
  bool ClosedWithin(absl::Duration wait) {
    const absl::Time end = absl::Now() + wait;
    char buffer[4096];
    while (absl::Now() < end) {
      pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
      if (poll(&p, 1, 50) <= 0) continue;
      if (recv(fd_, buffer, sizeof(buffer), 0) <= 0) return true;
    }
    return false;
  }

  // HTTP/2 with prior knowledge (gRPC's cleartext): the preface and an empty SETTINGS.
  bool SendHttp2Preface() {
    return Send(std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + Http2Frame(kSettings, 0, 0, ""));
  }
  static constexpr uint8_t kHeaders = 1, kSettings = 4, kPing = 6;
  static std::string Http2Frame(uint8_t type, uint8_t flags, uint32_t stream,
                                const std::string& payload) {
    const size_t n = payload.size();
    std::string frame = {static_cast<char>((n >> 16) & 0xff),
                         static_cast<char>((n >> 8) & 0xff),
                         static_cast<char>(n & 0xff),
                         static_cast<char>(type),
                         static_cast<char>(flags),
                         static_cast<char>(stream >> 24),
                         static_cast<char>(stream >> 16),
                         static_cast<char>(stream >> 8),
                         static_cast<char>(stream)};
    return frame + payload;
  }
  // One HPACK "literal without indexing, new name" field; name and value under 127 bytes.
  static std::string HpackLiteral(const std::string& name, const std::string& value) {
    return std::string(1, '\0') + static_cast<char>(name.size()) + name +
           static_cast<char>(value.size()) + value;
  }
  // The request headers of a gRPC call to `path`, for a HEADERS frame.
  static std::string GrpcRequestHeaders(const std::string& path) {
    return HpackLiteral(":method", "POST") + HpackLiteral(":scheme", "http") +
           HpackLiteral(":path", path) + HpackLiteral(":authority", "localhost") +
           HpackLiteral("content-type", "application/grpc") + HpackLiteral("te", "trailers");
  }

 private:
  int fd_;
  bool connected_ = false;
};

}  // namespace ply::testing

#endif  // PLY_TESTS_RAW_HTTP_H_
