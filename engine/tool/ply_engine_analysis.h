// The game-analysis subcommands of `ply-engine`, over engine/tool/analysis_tool.h:
//   analyze-game GAME --moves "M1 M2 ..."   every move of one game judged, and each side's summary
//   fit-winchance GAME                      the game's score -> win chance curve, from self-play
//   error-rates GAME                        each level's errors per 100 moves against --b
// Each reads its flags (ply_engine_flags.h), prints text or one JSON object under --json, and
// returns the process's exit code.
#ifndef PLY_ENGINE_TOOL_PLY_ENGINE_ANALYSIS_H_
#define PLY_ENGINE_TOOL_PLY_ENGINE_ANALYSIS_H_

#include <string>
#include <vector>

#include "engine/core/options.h"

namespace ply {

int AnalyzeGameCommand(const std::vector<std::string>& args, const GameOptions& options);

// `command_line` is how the tool was run, for the written header to say how to refit it.
int FitWinChanceCommand(const std::vector<std::string>& args, const GameOptions& options,
                        const std::string& command_line);

int ErrorRatesCommand(const std::vector<std::string>& args, const GameOptions& options);

}  // namespace ply

#endif  // PLY_ENGINE_TOOL_PLY_ENGINE_ANALYSIS_H_
