// What `ply` says about itself: the commands and their help, and the version it was built as.
#ifndef PLY_CLIENT_CLI_HELP_H_
#define PLY_CLIENT_CLI_HELP_H_

#include <ostream>
#include <string>

namespace ply::client {

// The lobby `ply` talks to when neither --server nor $PLY_SERVER names one: the local stack.
inline constexpr char kDefaultServer[] = "127.0.0.1:50050";

// `ply help`: every command's usage and what else there is to know.
void PrintHelp(std::ostream& out);
// `ply help COMMAND`; false when there is no such command.
bool PrintCommandHelp(const std::string& command, std::ostream& out);
// "ply 0.1 (commit 1a2b3c4, Release build)\n": the project's version and the git commit the
// build was configured from ("unknown" outside a git checkout).
std::string Version();

}  // namespace ply::client

#endif  // PLY_CLIENT_CLI_HELP_H_
