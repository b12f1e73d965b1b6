// `ply-engine solve`: exact values of positions for games that have an exact solver.
//   solve connect4 MOVES      the score in the public test sets' convention (last line: integer)
#ifndef PLY_ENGINE_TOOL_SOLVE_H_
#define PLY_ENGINE_TOOL_SOLVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/options.h"

namespace ply {

struct SolveLimits {
  int64_t time_ms = 0;
  int64_t max_nodes = 0;
  size_t tt_megabytes = 64;
};

// Runs `solve` with its arguments (game first) and returns what to print.
absl::StatusOr<std::string> SolveCommand(const std::vector<std::string>& args,
                                         const GameOptions& options, bool json,
                                         const SolveLimits& limits);

}  // namespace ply

#endif  // PLY_ENGINE_TOOL_SOLVE_H_
