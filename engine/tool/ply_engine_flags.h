// What the source files of `ply-engine` share: the flags read outside ply_engine.cc (every flag
// is defined once, beside main there) and the helpers that turn flags into a match and a failure
// into an exit code, so that every subcommand does both the same way.
#ifndef PLY_ENGINE_TOOL_PLY_ENGINE_FLAGS_H_
#define PLY_ENGINE_TOOL_PLY_ENGINE_FLAGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "engine/core/options.h"
#include "engine/tool/match.h"

ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(std::string, moves);
ABSL_DECLARE_FLAG(int, tt_mb);
ABSL_DECLARE_FLAG(std::string, out);
ABSL_DECLARE_FLAG(int64_t, judge_ms);
ABSL_DECLARE_FLAG(int, judge_depth);
ABSL_DECLARE_FLAG(std::string, levels);

namespace ply {

// Reports `status` (as {"error", "code"} on stdout under --json, else on stderr) and returns the
// exit code: 2 for bad input, 1 for anything else.
int Fail(const absl::Status& status);

// `why` and the usage message on stderr; returns 2.
int Usage(const std::string& why);

// The moves of --moves: separated by spaces or commas.
std::vector<std::string> SplitMoves(std::string_view text);

// A match of `game` as --a, --b, --games, --seed, --opening-plies, --time-ms, --nodes and
// --tt-mb describe it.
MatchConfig MatchConfigFromFlags(const std::string& game, const GameOptions& options);

}  // namespace ply

#endif  // PLY_ENGINE_TOOL_PLY_ENGINE_FLAGS_H_
