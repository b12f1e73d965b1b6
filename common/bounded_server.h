// An httplib::Server whose connections cannot make it read or hold without bound, for every HTTP
// port ply serves (ply-web, and GET /metrics of ply-bot and ply-lobby). cpp-httplib 0.11 keeps
// reading header lines for as long as a client sends them (each line is capped, their number is
// not: one connection made ply-web hold 470 MB, ply-lobby's metrics port 340 MB) and gives a
// request as long as it likes to arrive, a byte every few seconds (slowloris), each such connection
// holding one of the server's threads. Here each request must arrive whole (head and body) within a
// byte budget and a deadline, and one client address holds a bounded number of connections.
// What a request makes the server write is bounded too: a Range header asking for more than one
// range is ignored (httplib 0.11 answers one as a multipart body holding the whole answer once
// per range, built in memory: 2,000 ranges of ply-web's 72 KB app.js made a 148 MB answer), a
// request framed by both Content-Length and Transfer-Encoding has its connection closed after
// the answer (RFC 9112 6.1: another server in the path may have framed it by the length), a
// request framed by neither has an empty body (6.3; httplib waited for one until its timeout),
// and a handler's exception is a plain 500 whose text goes to the log, not to the client.
#ifndef PLY_COMMON_BOUNDED_SERVER_H_
#define PLY_COMMON_BOUNDED_SERVER_H_

#include <httplib.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "absl/time/time.h"

namespace ply {

struct ConnectionLimits {
  // Bytes of request line and headers one request may send (its body is bounded separately, by
  // set_payload_max_length).
  size_t max_head = 64 * 1024;
  // Time a request may take to arrive whole, from its first byte.
  absl::Duration request_deadline = absl::Seconds(10);
  // Connections one client address may hold open at once; 0: no limit (behind a proxy every
  // client has the proxy's address).
  int per_client = 0;
  // The client an address counts as (ply-web counts an IPv6 client by its /64); none: itself.
  std::function<std::string(const std::string&)> client_key;
  // The server's threads (0: not known). With three quarters of them holding connections the
  // server is under pressure: a request then has `pressure_deadline` from its first byte to
  // arrive whole (also one that began before), a new connection as long to begin one, and a
  // kept-alive connection a tenth of a second to begin its next. Slow senders from many addresses,
  // each within the per-address bound, held every thread for the whole request_deadline.
  int threads = 0;
  absl::Duration pressure_deadline = absl::Seconds(2);
};

class BoundedServer : public httplib::Server {
 public:
  // Bodies are capped at 64 KiB unless set_payload_max_length says otherwise (httplib's own
  // default is no cap, which would leave the per-request byte budget none either).
  explicit BoundedServer(ConnectionLimits limits);

 private:
  bool process_and_close_socket(socket_t sock) override;
  // False when `address` already holds its connections; else counts one more.
  bool Admit(const std::string& address);
  void Release(const std::string& address);
  bool UnderPressure() const;

  const ConnectionLimits limits_;
  // Connections being served (each holds a thread).
  std::atomic<int> serving_{0};
  std::mutex mu_;
  std::map<std::string, int> open_;  // by client address; guarded by mu_
};

}  // namespace ply

#endif  // PLY_COMMON_BOUNDED_SERVER_H_
