// Whole numbers from command lines and the environment, checked: std::atoi reads "12x" as 12 and
// "ten" as 0, and a tool then runs with a value nobody asked for.
#ifndef PLY_ENGINE_TOOL_NUMBER_ARG_H_
#define PLY_ENGINE_TOOL_NUMBER_ARG_H_

#include <charconv>
#include <string_view>
#include <system_error>

namespace ply {

// The whole of `text` as a number from `least` to `most`, into `*out`; false (and `*out` left
// as it was) for anything else: a sign where none fits, trailing characters, out of range.
template <class T>
bool ParseNumberArg(std::string_view text, T least, T most, T* out) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < least || value > most) {
    return false;
  }
  *out = value;
  return true;
}

}  // namespace ply

#endif  // PLY_ENGINE_TOOL_NUMBER_ARG_H_
