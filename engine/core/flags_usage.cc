#include "engine/core/flags_usage.h"

#include <cstdlib>
#include <iostream>

#include "absl/base/config.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"

#if ABSL_LTS_RELEASE_VERSION == 20220623
#include "absl/flags/internal/parse.h"
#include "absl/flags/internal/usage.h"
#endif

namespace ply {

std::string FlagFileName(std::string_view path) {
  constexpr std::string_view kSource = PLY_SOURCE_DIR "/";
  if (path.substr(0, kSource.size()) == kSource) return std::string(path.substr(kSource.size()));
  while (path.substr(0, 2) == "./") path.remove_prefix(2);
  if (const size_t absl = path.rfind("absl/"); absl != std::string_view::npos) {
    return std::string(path.substr(absl));
  }
  const size_t last = path.rfind('/');
  if (last == std::string_view::npos || last == 0) return std::string(path);
  const size_t before = path.rfind('/', last - 1);
  return std::string(before == std::string_view::npos ? path : path.substr(before + 1));
}

void SetFlagsUsage(std::string_view usage, std::string (*version)()) {
  absl::SetProgramUsageMessage(absl::string_view(usage.data(), usage.size()));
  absl::FlagsUsageConfig config;
  if (version != nullptr) config.version_string = version;
  config.normalize_filename = [](absl::string_view path) {
    return FlagFileName(std::string_view(path.data(), path.size()));
  };
  // Abseil's --help lists only flags defined in <program>.cc or <program>_main.cc, which no ply
  // program has (ply-lobby's are in lobby-server/main.cc), so --help printed "No flags matched".
  // It lists the program's own flags instead: every file but Abseil's (those are --helpfull's).
  config.contains_help_flags = [](absl::string_view file) {
    return !absl::StartsWith(file, "absl/");
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  absl::SetFlagsUsageConfig(config);
}

std::vector<char*> ParseFlags(int argc, char** argv) {
#if ABSL_LTS_RELEASE_VERSION == 20220623
  // What absl::ParseCommandLine does in this version, with the help requests answered here:
  // its HandleUsageFlags returns 1 for every one of them but --version and --only_check_args.
  namespace fi = absl::flags_internal;
  std::vector<char*> rest = fi::ParseCommandLineImpl(
      argc, argv, fi::ArgvListAction::kRemoveParsedArgs, fi::UsageFlagsAction::kIgnoreUsage,
      fi::OnUndefinedFlag::kAbortIfUndefined);
  if (fi::HandleUsageFlags(std::cout, absl::ProgramUsageMessage()) >= 0) {
    std::cout.flush();
    std::exit(0);
  }
  return rest;
#else
  // Other versions' internals differ: their own behaviour, which exits with 1 after help in
  // those checked (Debian 12's is the one this project builds with).
  return absl::ParseCommandLine(argc, argv);
#endif
}

}  // namespace ply
