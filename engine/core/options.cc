#include "engine/core/options.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/core/text.h"

namespace ply {

absl::Status CheckKnownOptions(std::string_view game, const GameOptions& options,
                               const std::vector<OptionInfo>& known) {
  for (const auto& [name, value] : options) {
    bool found = false;
    for (const OptionInfo& info : known) found = found || info.name == name;
    if (!found) {
      std::vector<std::string> names;
      for (const OptionInfo& info : known) names.push_back(info.name);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '", name, "' for ", Absl(game),
                       names.empty() ? " (it takes no options)"
                                     : absl::StrCat(" (known: ", absl::StrJoin(names, ", "), ")")));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> IntOption(const GameOptions& options, std::string_view name, int fallback,
                              int lo, int hi) {
  auto it = options.find(name);
  if (it == options.end()) return fallback;
  int value = 0;
  if (!absl::SimpleAtoi(it->second, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("option ", Absl(name), " must be an integer, not '", it->second, "'"));
  }
  if (value < lo || value > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("option ", Absl(name), "=", value, " is out of range ", lo, "..", hi));
  }
  return value;
}

absl::StatusOr<bool> BoolOption(const GameOptions& options, std::string_view name, bool fallback) {
  auto it = options.find(name);
  if (it == options.end()) return fallback;
  std::string v = absl::AsciiStrToLower(it->second);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("option ", Absl(name), " must be true or false, not '", it->second, "'"));
}

absl::StatusOr<std::string> ChoiceOption(const GameOptions& options, std::string_view name,
                                         std::string_view fallback,
                                         const std::vector<std::string>& allowed) {
  auto it = options.find(name);
  if (it == options.end()) return std::string(fallback);
  for (const std::string& a : allowed) {
    if (a == it->second) return a;
  }
  return absl::InvalidArgumentError(absl::StrCat("option ", Absl(name), " must be one of ",
                                                 absl::StrJoin(allowed, ", "), ", not '",
                                                 it->second, "'"));
}

absl::StatusOr<GameOptions> ParseOptions(std::string_view text) {
  GameOptions options;
  for (absl::string_view item :
       absl::StrSplit(Absl(text), absl::ByAnyChar(", "), absl::SkipEmpty())) {
    size_t eq = item.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("option '", item, "' is not of the form name=value"));
    }
    options[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
  }
  return options;
}

std::string FormatOptions(const GameOptions& options) {
  return absl::StrJoin(options, ",", absl::PairFormatter("="));
}

}  // namespace ply
