// The lobby's messages as the web page reads them: JSON with seats counted as the lobby counts
// them (the page adds one when it speaks to people), boards as cell codes (board_model.h), and a
// bot's search shown only where the reader may see it.
#ifndef PLY_CLIENT_WEB_MATCH_JSON_H_
#define PLY_CLIENT_WEB_MATCH_JSON_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "ply/v1/lobby.pb.h"

namespace ply::web {

// Who reads: a player of a match still running does not see what a bot's search thought of it
// (the same rule as the terminal client), a spectator does.
enum class Reader { kSpectator, kPlayer };

nlohmann::json GamesJson(const v1::ListGamesResponse& games);
nlohmann::json MoveJson(const v1::MoveRecord& move, bool show_thinking);
// Everything but the moves: seats, clocks, status, result, the board and the legal moves.
// `legal_moves` replaces the match's own (the lobby sends them only in some replies).
nlohmann::json StateJson(const v1::Match& match, const std::vector<std::string>& legal_moves);
// The whole match, moves included.
nlohmann::json MatchJson(const v1::Match& match, Reader reader);
// One row of the list; `board` is the match's rendered board ("" when not known).
nlohmann::json SummaryJson(const v1::MatchSummary& summary, const std::string& board);

// A player's profile: ratings per game ({game, rating, deviation, provisional, games, wins,
// draws, losses}).
nlohmann::json PlayerJson(const v1::Player& player);
nlohmann::json LeaderboardJson(const v1::LeaderboardResponse& board);
// One event of a pairing stream: {"waiting"}, {"bot_offer"} or {"paired"} (with the seat token).
nlohmann::json PairEventJson(const v1::PairEvent& event);
// An analysis as the page draws it: each move's mark, values and best move, each side's
// accuracy, and whether it covers only the moves so far (`partial`, a bot match still on).
nlohmann::json AnalysisJson(const v1::MatchAnalysis& analysis);
// An analysis's progress: positions judged and in all, and its place in the lobby's queue.
nlohmann::json AnalysisProgressJson(const v1::AnalysisProgress& progress);

// Whether `reader` may see bot thinking in `match` as it stands (client::ShowsBotThinking).
bool ShowsThinking(const v1::Match& match, Reader reader);

}  // namespace ply::web

#endif  // PLY_CLIENT_WEB_MATCH_JSON_H_
