// How every ply program introduces its flags: the usage line, --help listing the program's own
// flags (not Abseil's), and the files flags are listed
// under in --helpfull named as they are in the source tree ("client-cli/main.cc"), never by the
// path of the machine that built the program.
#ifndef PLY_ENGINE_CORE_FLAGS_USAGE_H_
#define PLY_ENGINE_CORE_FLAGS_USAGE_H_

#include <string>
#include <string_view>
#include <vector>

namespace ply {

// Call before absl::ParseCommandLine. `version`, when given, answers --version.
void SetFlagsUsage(std::string_view usage, std::string (*version)() = nullptr);

// absl::ParseCommandLine, except that a request for help (--help, --helpfull, --helpshort, ...)
// exits with status 0 once it is answered: Abseil exits with 1, which a script or a container's
// health check reads as a failure. Errors in the flags still exit 1. Done for Debian 12's Abseil
// (20220623), whose internals it calls; with any other version it is absl::ParseCommandLine.
std::vector<char*> ParseFlags(int argc, char** argv);

// The name --helpfull gives a source file: relative to the project ("lobby-server/main.cc"), or
// Abseil's own ("absl/flags/parse.cc"); a path elsewhere keeps its last two parts.
std::string FlagFileName(std::string_view path);

}  // namespace ply

#endif  // PLY_ENGINE_CORE_FLAGS_USAGE_H_
