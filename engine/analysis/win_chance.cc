#include "engine/analysis/win_chance.h"

#include <cmath>

#include "engine/games/connect4/win_chance.h"
#include "engine/games/draughts/win_chance.h"
#include "engine/games/gomoku/win_chance.h"
#include "engine/games/morris/win_chance.h"
#include "engine/games/reversi/win_chance.h"
#include "engine/games/tictactoe/win_chance.h"
#include "engine/games/tictactwo/win_chance.h"

namespace ply {

WinChanceCurve WinChanceCurveFor(std::string_view game) {
  if (game == "connect4") return kConnect4WinChance;
  if (game == "tictactoe") return kTicTacToeWinChance;
  if (game == "tictactwo") return kTicTacTwoWinChance;
  if (game == "reversi") return kReversiWinChance;
  if (game == "gomoku") return kGomokuWinChance;
  if (game == "draughts") return kDraughtsWinChance;
  if (game == "morris") return kMorrisWinChance;
  return {.scale = 1.0 / 400};
}

int ExactOutcome(Score score) { return score > 0 ? 1 : score < 0 ? -1 : 0; }

double WinChance(const WinChanceCurve& curve, Score score, bool exact) {
  if (exact || IsMateScore(score)) return (ExactOutcome(score) + 1) / 2.0;
  return 1.0 / (1.0 + std::exp(-curve.scale * static_cast<double>(score)));
}

}  // namespace ply
