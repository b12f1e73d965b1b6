// Budgets for one call of an exact solver (Connect Four, Reversi endgames); 0 (or null) means
// no limit. A solver stopped by any of them reports the position as unsolved.
#ifndef PLY_ENGINE_SEARCH_SOLVER_LIMITS_H_
#define PLY_ENGINE_SEARCH_SOLVER_LIMITS_H_

#include <atomic>
#include <cstdint>

namespace ply {

struct SolverLimits {
  int64_t max_nodes = 0;
  int64_t time_ms = 0;
  const std::atomic<bool>* stop = nullptr;
};

}  // namespace ply

#endif  // PLY_ENGINE_SEARCH_SOLVER_LIMITS_H_
