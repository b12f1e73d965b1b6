// Small text helpers for move parsing. Debian's Abseil is built with its own absl::string_view
// (not std::string_view), so engine code that speaks std::string_view converts with Absl()
// before calling absl::StrCat/StrSplit/SimpleAtoi.
#ifndef PLY_ENGINE_CORE_TEXT_H_
#define PLY_ENGINE_CORE_TEXT_H_

#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"

namespace ply {

inline absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view Std(absl::string_view s) { return std::string_view(s.data(), s.size()); }

inline std::string_view Trim(std::string_view s) {
  return Std(absl::StripAsciiWhitespace(Absl(s)));
}

// A whole decimal integer (surrounding spaces allowed); false otherwise.
inline bool ParseInt(std::string_view s, int* out) { return absl::SimpleAtoi(Absl(s), out); }

}  // namespace ply

#endif  // PLY_ENGINE_CORE_TEXT_H_
