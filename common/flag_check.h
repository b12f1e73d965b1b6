// Numeric flags checked before a server starts anything: a value out of its range is a sentence
// naming the flag, the value and the range (the server exits 2), not a silent clamp or a
// process that starts and then misbehaves (a negative claim bound, a zero-thread pool).
#ifndef PLY_COMMON_FLAG_CHECK_H_
#define PLY_COMMON_FLAG_CHECK_H_

#include <initializer_list>
#include <string_view>

#include "absl/status/status.h"

namespace ply {

struct FlagRange {
  // The flag's name, without dashes.
  std::string_view name;
  double value;
  double min;
  double max;
  // What the bounds mean, when a sentence helps ("0 means never"); may be empty.
  std::string_view meaning = "";
};

// A FlagRange of the flag FLAGS_`name` by its own name, so that the sentence cannot name another:
// PLY_FLAG_RANGE(threads, 1, 4096), PLY_FLAG_RANGE(port, 0, 65535, "0 picks a free port").
#define PLY_FLAG_RANGE(name, ...) \
  ::ply::FlagRange { #name, static_cast < double>(absl::GetFlag(FLAGS_##name)), __VA_ARGS__ }

// The first flag out of its range, as InvalidArgument ("--tt_mb=-1 is out of range: it must be
// 1..65536 (MiB per table)"); OK when every one is in range. NaN is out of every range.
absl::Status CheckFlagRanges(std::initializer_list<FlagRange> ranges);

}  // namespace ply

#endif  // PLY_COMMON_FLAG_CHECK_H_
