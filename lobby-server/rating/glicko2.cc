#include "lobby-server/rating/glicko2.h"

#include <algorithm>
#include <cmath>

namespace ply::lobby {
namespace {

constexpr double kScale = 173.7178;  // 400 / ln(10)
constexpr double kPi = 3.14159265358979323846;

double G(double phi) { return 1.0 / std::sqrt(1.0 + 3.0 * phi * phi / (kPi * kPi)); }

double E(double mu, double mu_j, double phi_j) {
  return 1.0 / (1.0 + std::exp(-G(phi_j) * (mu - mu_j)));
}

}  // namespace

Glicko GlickoUpdate(const Glicko& player, const std::vector<GlickoGame>& games, double tau) {
  const double mu = (player.rating - 1500) / kScale;
  const double phi = player.deviation / kScale;
  const double sigma = player.volatility;
  if (games.empty()) {
    // Only the deviation grows.
    Glicko out = player;
    out.deviation = std::min(350.0, std::sqrt(phi * phi + sigma * sigma) * kScale);
    return out;
  }
  double v_inverse = 0, sum = 0;
  for (const GlickoGame& g : games) {
    const double mu_j = (g.opponent.rating - 1500) / kScale;
    const double phi_j = g.opponent.deviation / kScale;
    const double e = E(mu, mu_j, phi_j);
    v_inverse += G(phi_j) * G(phi_j) * e * (1 - e);
    sum += G(phi_j) * (g.score - e);
  }
  const double v = 1.0 / v_inverse;
  const double delta = v * sum;
  // The new volatility: the root of f by the Illinois algorithm (step 5 of the paper).
  const double a = std::log(sigma * sigma);
  const auto f = [&](double x) {
    const double ex = std::exp(x);
    const double d = phi * phi + v + ex;
    return ex * (delta * delta - phi * phi - v - ex) / (2 * d * d) - (x - a) / (tau * tau);
  };
  double lo = a, hi;
  if (delta * delta > phi * phi + v) {
    hi = std::log(delta * delta - phi * phi - v);
  } else {
    int k = 1;
    while (f(a - k * tau) < 0) ++k;
    hi = a - k * tau;
  }
  double f_lo = f(lo), f_hi = f(hi);
  for (int i = 0; i < 100 && std::abs(hi - lo) > 1e-6; ++i) {
    const double c = lo + (lo - hi) * f_lo / (f_hi - f_lo);
    const double f_c = f(c);
    if (f_c * f_hi <= 0) {
      lo = hi;
      f_lo = f_hi;
    } else {
      f_lo /= 2;
    }
    hi = c;
    f_hi = f_c;
  }
  const double new_sigma = std::exp(lo / 2);
  const double phi_star = std::sqrt(phi * phi + new_sigma * new_sigma);
  const double new_phi = 1.0 / std::sqrt(1.0 / (phi_star * phi_star) + 1.0 / v);
  const double new_mu = mu + new_phi * new_phi * sum;
  return {.rating = new_mu * kScale + 1500,
          .deviation = std::min(350.0, new_phi * kScale),
          .volatility = new_sigma};
}

}  // namespace ply::lobby
