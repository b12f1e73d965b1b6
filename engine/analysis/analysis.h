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
// Marks. Where both scores around a move are proven (an exact verdict), the true results decide:
// a win turned into a draw is a mistake, a win or draw turned into a loss a blunder, anything
// else (a win kept, however slowly) is not marked. Elsewhere the drop in the mover's win chance
// (win_chance.h) decides, as lichess does for chess: a drop of at least 5 percentage points is an
// inaccuracy (?!), 10 a mistake (?), 15 a blunder (??). The engine's own best move is never
// marked and counts as no drop.
//
// Accuracy of a move: 103.1668 * exp(-0.04354 * d) - 3.1669, clamped to [0, 100], where d is the
// drop in win chance in percentage points (lichess's per-move formula: 100 for no drop, about 80
// for a 5-point drop, 50 for 15 points). A player's accuracy is the mean over their moves.
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
// move), nullopt exactly where the game is over there. INVALID_ARGUMENT when they do not fit.
absl::StatusOr<GameAnalysis> AssembleAnalysis(
    std::string_view game, const GameOptions& options, const std::vector<std::string>& moves,
    const std::vector<std::optional<SearchReport>>& judgements);

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
