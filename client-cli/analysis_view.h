// How `ply analyze`, `ply replay` and `ply record` show a match's post-game analysis
// (LobbyService.AnalyzeMatch): a table of every move with the evaluations before and after it
// from the mover's side (in the game's units and as a win chance), the best move and its line,
// the mark (?! inaccuracy, ? mistake, ?? blunder) and whether the verdict is exact; then each
// player's accuracy and mark counts. Pure text, so tests read it without a terminal.
#ifndef PLY_CLIENT_CLI_ANALYSIS_VIEW_H_
#define PLY_CLIENT_CLI_ANALYSIS_VIEW_H_

#include <string>

#include "client-cli/render.h"
#include "ply/v1/lobby.pb.h"

namespace ply::client {

// What an AnalyzeMatch progress event says, one line: waiting for another request's analysis,
// waiting for a turn in the lobby's queue ("3rd in line"), or the bar, with a word when the bots
// are busy with people's moves.
std::string ProgressText(const v1::AnalysisProgress& p);
// "", "?!", "?", "??".
std::string MarkSymbol(v1::MoveMark mark);
// "[#########.........]  12/40 positions".
std::string ProgressBar(int done, int total, int width = 30);
// The whole table and the players' summary.
std::string AnalysisText(const v1::Match& match, const v1::MatchAnalysis& analysis, Look look);
// One move's verdict in a line, for the replay: "?? blunder (exact): best 1, line 1 4 7;
// win in 13 (100%) -> loss in 2 (0%)".
std::string MoveAnalysisLine(const v1::MoveAnalysis& move, Look look);

}  // namespace ply::client

#endif  // PLY_CLIENT_CLI_ANALYSIS_VIEW_H_
