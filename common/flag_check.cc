#include "common/flag_check.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace ply {
namespace {

// A whole number as one ("65536", not "65536.0" or "6.5536e+04"); others as absl writes them.
std::string Number(double v) {
  if (std::isfinite(v) && std::fabs(v) < 1e15 && v == std::trunc(v)) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  return absl::StrCat(v);
}

}  // namespace

absl::Status CheckFlagRanges(std::initializer_list<FlagRange> ranges) {
  for (const FlagRange& r : ranges) {
    // Written so that NaN fails it.
    if (r.value >= r.min && r.value <= r.max) continue;
    return absl::InvalidArgumentError(
        absl::StrCat("--", std::string(r.name), "=", Number(r.value),
                     " is out of range: it must be ", Number(r.min), "..", Number(r.max),
                     r.meaning.empty() ? "" : absl::StrCat(" (", std::string(r.meaning), ")")));
  }
  return absl::OkStatus();
}

}  // namespace ply
