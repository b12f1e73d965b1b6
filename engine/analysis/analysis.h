// Post-game analysis for every game in the registry: each position of a game is judged (the
// best move, its line and the score for the side to move, exact where a solver or a finished
// search proves it), and each played move gets a verdict from the judgements of the positions
// before and after it.
//
// Judging a position: the game's exact solver first when it has one (Connect Four from the book
// or the solver, Reversi endgames within the budget's reach), else the alpha-beta search to the
// depth cap or time budget; Tic-Tac-Toe's search always finishes, so its verdicts are exact.
// There is no randomness: no random moves, no evaluation noise.
//
// One judge, one scale, one side. Every score of a verdict is from the mover's side. A proven
// value is the truth and beats every estimate: where the position after a move is proven (by
// its own judgement, or because the solver's best move led there from a proven position), that
// is the move's value. Elsewhere the judge of the position is a search to some depth d, and the
// move's value comes from the same judge: the engine's best move keeps the judge's score (it is the
// value the search gave that move), and any other move is searched in the position after it to
// depth d - 1 with the same evaluation and tables (JudgeMove), so that a verdict never compares two
// searches of different depths. Should that search find the move better than the judge's best, the
// position is worth at least as much and the move loses nothing. An exact value and a heuristic
// one are compared only through win chances: a proven result is 0, 1/2 or 1, a heuristic score
// goes through the game's win-chance curve (win_chance.h).
//
// Marks. Where both scores around a move are proven (an exact verdict), the true results decide:
// a win turned into a draw is a mistake, a win or draw turned into a loss a blunder, anything
// else (a win kept, however slowly) is not marked. Elsewhere the drop in the mover's win chance
// decides, as lichess does for chess: a drop of at least 5 percentage points is an inaccuracy
// (?!), 10 a mistake (?), 15 a blunder (??). The engine's best move is never marked.
//
// Accuracy follows the definition lichess publishes for chess. A move's accuracy is
// 103.1668 * exp(-0.04354 * d) - 3.1669, clamped to [0, 100], where d is the drop in the mover's
// win chance in percentage points (100 for no drop, about 80 for 5 points, 50 for 15). A player's
// accuracy for a game is the average of two means of their moves' accuracies: one weighted by
// how much the game swung around each move (the standard deviation of the win chances in a
// window of positions around it, window max(2, min(8, positions / 10)), weights clamped to
// [0.5, 12]), so that moves in a sharp position count more than moves in a settled one; and the
// harmonic mean (each accuracy taken as at least 1), so that a few bad moves weigh heavily. A
// game thrown away by a few blunders thus cannot score like a clean one.
#ifndef PLY_ENGINE_ANALYSIS_ANALYSIS_H_
#define PLY_ENGINE_ANALYSIS_ANALYSIS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/analysis/win_chance.h"
#include "engine/core/options.h"
#include "engine/registry/any_game.h"
#include "engine/search/difficulty.h"

namespace ply {

struct AnalysisLimits {
  // Per position: time (also the solver's), depth cap (0: none) and node budget (0: none).
  int64_t time_ms = 1000;
  int max_depth = 0;
  int64_t max_nodes = 0;
  const std::atomic<bool>* stop = nullptr;
};

// The difficulty that judges positions: perfect (solver first), no noise, no random moves.
Difficulty AnalysisLevel(int64_t time_ms, int max_depth);

// Judges the position `game` is in (it must not be over); the game is left as it was.
absl::StatusOr<SearchReport> JudgePosition(AnyGame& game, const AnalysisLimits& limits,
                                           SearchCache* cache = nullptr);

// Whether a move played in a position so judged needs a value of its own from the judge: the
// judgement is a search's (not proven) and the move is not its best.
bool NeedsMoveJudgement(const SearchReport& judgement, std::string_view move);

// The value of `move` in the position `game` is in, by the judge that gave `judgement` there:
// the position after the move searched to one ply less than the judgement reached, with the
// same limits (a proven value where the solver answers first). The score is from the side to
// move in `game` (the mover); a move that ends the game gets its true result. The game is left
// as it was.
absl::StatusOr<SearchReport> JudgeMove(AnyGame& game, std::string_view move,
                                       const SearchReport& judgement, const AnalysisLimits& limits,
                                       SearchCache* cache = nullptr);

enum class Mark { kNone = 0, kInaccuracy = 1, kMistake = 2, kBlunder = 3 };
// "", "?!", "?", "??".
std::string_view MarkSymbol(Mark mark);
// "none", "inaccuracy", "mistake", "blunder".
std::string_view MarkName(Mark mark);

// The thresholds above, in win-chance points (0..1).
inline constexpr double kInaccuracyDrop = 0.05;
inline constexpr double kMistakeDrop = 0.10;
inline constexpr double kBlunderDrop = 0.15;
double MoveAccuracy(double win_chance_drop);
// A player's accuracy for a game (above): `accuracies` of their moves, `weights` the swing around
// each (same size). 0 for no moves.
double GameAccuracy(const std::vector<double>& accuracies, const std::vector<double>& weights);
// The swing weights of the moves of a game whose positions had the first player's win chances
// `chances` (0..1; one more than the moves).
std::vector<double> SwingWeights(const std::vector<double>& chances);

struct MoveVerdict {
  int ply = 0;  // 0-based index into the moves
  Player player = 0;
  std::string move;
  // Scores from the mover's side, before and after the move, in the game's units (mate scores
  // for proven wins and losses; Reversi's solver gives the final disc difference).
  Score before = 0;
  bool before_exact = false;
  Score after = 0;
  bool after_exact = false;
  // The scores in words (SearchReport::ScoreText): "+3", "win in 7", "draw", and "win (proven)"
  // where only the outcome is proven (a win/loss/draw solve, whose score is just its sign).
  std::string before_text;
  std::string after_text;
  double win_before = 0.5;
  double win_after = 0.5;
  std::string best_move;
  std::vector<std::string> best_line;
  Mark mark = Mark::kNone;
  // Both scores were proven: the mark comes from the true results.
  bool exact_verdict = false;
  // The move's value came from the judge of the position before it (the judge's best move, or
  // JudgeMove's search at the judge's depth), not from a separate judgement of the next position.
  bool same_judge = false;
  double accuracy = 100;
};

struct PlayerSummary {
  int moves = 0;
  int inaccuracies = 0;
  int mistakes = 0;
  int blunders = 0;
  double accuracy = 0;
};

struct GameAnalysis {
  std::string game;
  std::vector<MoveVerdict> moves;
  PlayerSummary players[2];
};

// The verdicts of `moves` from the judgements of the positions they lead through: `judgements[i]`
// judges the position before move i (i = 0..moves.size(); the last is the position after the last
// move), nullopt exactly where the game is over there. `played[i]`, when given, is JudgeMove's
// value of move i (empty, or one entry per move, nullopt where none was needed or none came).
// INVALID_ARGUMENT when they do not fit.
absl::StatusOr<GameAnalysis> AssembleAnalysis(
    std::string_view game, const GameOptions& options, const std::vector<std::string>& moves,
    const std::vector<std::optional<SearchReport>>& judgements,
    const std::vector<std::optional<SearchReport>>& played = {});

// The positions of a game that need judging: for each i in 0..moves.size(), whether the game is
// still on before move i (after the last one for i = moves.size()).
absl::StatusOr<std::vector<bool>> PositionsToJudge(std::string_view game,
                                                   const GameOptions& options,
                                                   const std::vector<std::string>& moves);

// Judges every position here, one after another, and assembles the verdicts; `progress` (if set)
// hears (positions done, positions in all) after each.
absl::StatusOr<GameAnalysis> AnalyzeGame(std::string_view game, const GameOptions& options,
                                         const std::vector<std::string>& moves,
                                         const AnalysisLimits& limits, SearchCache* cache = nullptr,
                                         const std::function<void(int, int)>& progress = {});

}  // namespace ply

#endif  // PLY_ENGINE_ANALYSIS_ANALYSIS_H_
