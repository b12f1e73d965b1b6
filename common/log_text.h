// Log lines that text from the network cannot forge or flood, shared by ply-bot and ply-lobby.
// A request's fields go into a line quoted, escaped (a newline in a game name cannot start a
// line of its own) and cut to a bound; protobuf's own complaints about requests (invalid UTF-8
// in a string field, once per request) go through a rate limit instead of straight to stderr.
#ifndef PLY_COMMON_LOG_TEXT_H_
#define PLY_COMMON_LOG_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ply {

// `text` in double quotes, every byte outside printable ASCII escaped (\n, \x9b, ...), cut
// after `max_bytes` bytes with a note of the full length.
std::string LogQuote(absl::string_view text, size_t max_bytes = 64);

// Text from a caller inside a sentence sent back to it (an error): control bytes escaped, cut
// after `max_bytes` with "...".
std::string EchoBounded(absl::string_view text, size_t max_bytes = 64);

// A token bucket for log lines: `burst` lines at once, then one per `interval`.
class LogRateLimit {
 public:
  LogRateLimit(int burst, absl::Duration interval);
  // Whether a line may be written now; when it may, *suppressed is the number of lines refused
  // since the last one written.
  bool Allow(int64_t* suppressed);

 private:
  const double burst_;
  const absl::Duration interval_;
  std::mutex mu_;
  double tokens_;
  absl::Time last_;
  int64_t suppressed_ = 0;
};

// Sends protobuf's log lines to stderr as "PROGRAM: protobuf ERROR: message (file:line)", one
// line each, at most `burst` at once and then one per `interval`, with a count of those left
// out. Call once, early in main.
void RouteProtobufLogs(absl::string_view program, int burst = 10,
                       absl::Duration interval = absl::Seconds(10));

}  // namespace ply

#endif  // PLY_COMMON_LOG_TEXT_H_
