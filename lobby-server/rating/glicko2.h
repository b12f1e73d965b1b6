// Glicko-2 ratings (Mark Glickman, "Example of the Glicko-2 system", 2012), the scale players
// and bot levels share. Each rated game is a rating period of its own for both players, as on
// most online game servers: ratings move after every game, and a player who has not played for
// a while is not penalised here (no period without games is applied).
#ifndef PLY_LOBBY_SERVER_RATING_GLICKO2_H_
#define PLY_LOBBY_SERVER_RATING_GLICKO2_H_

#include <vector>

namespace ply::lobby {

struct Glicko {
  double rating = 1500;
  // The rating deviation: how uncertain the rating is (350 for a newcomer).
  double deviation = 350;
  double volatility = 0.06;
  // A rating whose deviation is above this is provisional (shown with "?").
  static constexpr double kProvisional = 110;
  bool provisional() const { return deviation > kProvisional; }
};

struct GlickoGame {
  Glicko opponent;
  // 1 win, 0.5 draw, 0 loss.
  double score = 0;
};

// The rating after one period with `games`. `tau` constrains how fast the volatility moves
// (Glickman suggests 0.3 to 1.2).
Glicko GlickoUpdate(const Glicko& player, const std::vector<GlickoGame>& games, double tau = 0.5);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_RATING_GLICKO2_H_
