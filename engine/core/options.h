// Game options as they arrive from users and the network: a map of name to text, validated by
// each game against the option descriptions it publishes.
#ifndef PLY_ENGINE_CORE_OPTIONS_H_
#define PLY_ENGINE_CORE_OPTIONS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ply {

using GameOptions = std::map<std::string, std::string, std::less<>>;

struct OptionInfo {
  std::string name;
  std::string default_value;
  std::string description;
};

// Rejects any option not in `known`, naming it and listing the known ones.
absl::Status CheckKnownOptions(std::string_view game, const GameOptions& options,
                               const std::vector<OptionInfo>& known);

// The integer option `name`, or `fallback` when absent; an error unless it lies in [lo, hi].
absl::StatusOr<int> IntOption(const GameOptions& options, std::string_view name, int fallback,
                              int lo, int hi);

// The boolean option `name` (true/false/1/0/yes/no/on/off), or `fallback` when absent.
absl::StatusOr<bool> BoolOption(const GameOptions& options, std::string_view name, bool fallback);

// The text option `name`, or `fallback`; an error unless it is one of `allowed`.
absl::StatusOr<std::string> ChoiceOption(const GameOptions& options, std::string_view name,
                                         std::string_view fallback,
                                         const std::vector<std::string>& allowed);

// "k=v,k2=v2" (or spaces) to options; an error on an item without '='.
absl::StatusOr<GameOptions> ParseOptions(std::string_view text);
// Options back to "k=v,k2=v2" in key order.
std::string FormatOptions(const GameOptions& options);

}  // namespace ply

#endif  // PLY_ENGINE_CORE_OPTIONS_H_
