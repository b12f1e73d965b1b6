#include "common/log_text.h"

#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace ply {

std::string LogQuote(absl::string_view text, size_t max_bytes) {
  const absl::string_view shown = text.substr(0, max_bytes);
  std::string out = absl::StrCat("\"", absl::CHexEscape(shown), "\"");
  if (shown.size() < text.size()) absl::StrAppend(&out, "...(", text.size(), " bytes)");
  return out;
}

std::string EchoBounded(absl::string_view text, size_t max_bytes) {
  std::string out;
  for (char c : text.substr(0, max_bytes)) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) {
      absl::StrAppendFormat(&out, "\\x%02x", b);
    } else {
      out += c;
    }
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

LogRateLimit::LogRateLimit(int burst, absl::Duration interval)
    : burst_(std::max(1, burst)), interval_(interval), tokens_(burst_), last_(absl::Now()) {}

bool LogRateLimit::Allow(int64_t* suppressed) {
  std::lock_guard lock(mu_);
  const absl::Time now = absl::Now();
  if (interval_ > absl::ZeroDuration()) {
    tokens_ = std::min(burst_, tokens_ + absl::FDivDuration(now - last_, interval_));
  }
  last_ = now;
  if (tokens_ < 1) {
    ++suppressed_;
    return false;
  }
  tokens_ -= 1;
  *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

namespace {

// protobuf takes a plain function pointer, so what it needs lives here.
std::string* protobuf_program = nullptr;
LogRateLimit* protobuf_limit = nullptr;

void ProtobufLogLine(google::protobuf::LogLevel level, const char* filename, int line,
                     const std::string& message) {
  static constexpr const char* kLevels[] = {"INFO", "WARNING", "ERROR", "FATAL"};
  int64_t suppressed = 0;
  // A fatal line comes before protobuf aborts the process: it is always written.
  if (level != google::protobuf::LOGLEVEL_FATAL && !protobuf_limit->Allow(&suppressed)) return;
  std::string out = absl::StrCat(*protobuf_program, ": protobuf ",
                                 kLevels[std::clamp(static_cast<int>(level), 0, 3)], ": ",
                                 EchoBounded(message, 512), " (", filename, ":", line, ")");
  if (suppressed > 0) absl::StrAppend(&out, " [", suppressed, " similar lines left out]");
  out += "\n";
  // One write, so that lines from different threads never interleave.
  std::fwrite(out.data(), 1, out.size(), stderr);
}

}  // namespace

void RouteProtobufLogs(absl::string_view program, int burst, absl::Duration interval) {
  // Set once and kept for the life of the process: protobuf may log from any thread until exit.
  protobuf_program = new std::string(program);
  protobuf_limit = new LogRateLimit(burst, interval);
  google::protobuf::SetLogHandler(&ProtobufLogLine);
}

}  // namespace ply
