// A game's score -> win chance curve (engine/analysis/win_chance.h says how it is used), kept in
// the game's folder (engine/games/GAME/win_chance.h, written by `ply-engine fit-winchance`) and
// named by the game's header as its kWinChance.
#ifndef PLY_ENGINE_CORE_WIN_CHANCE_CURVE_H_
#define PLY_ENGINE_CORE_WIN_CHANCE_CURVE_H_

namespace ply {

struct WinChanceCurve {
  // W(s) = 1 / (1 + exp(-scale * s)); 0: not fitted (a flat guess of 1/400 is used).
  double scale = 0;
  // How it was fitted, for people reading a table of results: games played and scores used.
  int games = 0;
  int samples = 0;
};

}  // namespace ply

#endif  // PLY_ENGINE_CORE_WIN_CHANCE_CURVE_H_
