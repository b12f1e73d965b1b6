// What a search or an exact solver may spend, and the one check of it they all use: a node
// budget, a time budget and an external stop flag. The alpha-beta search (search.h) also reads
// the difficulty dials in SearchLimits; the solvers (Connect Four, Reversi endgames) read the
// budget alone and report a position they could not finish as unsolved.
//
// Each caller decides how often it looks: the flag is one relaxed load, cheap enough for every
// node; the clock costs a system call, so it is read every few thousand nodes.
#ifndef PLY_ENGINE_SEARCH_BUDGET_H_
#define PLY_ENGINE_SEARCH_BUDGET_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace ply {

struct SearchLimits {
  // Deepest iteration; 0 means up to kMaxSearchPly - 1. Search only.
  int max_depth = 0;
  // Node budget; 0 means none. The search visits at most this many nodes.
  int64_t max_nodes = 0;
  // Time budget in milliseconds; 0 means none.
  int64_t time_ms = 0;
  // Search only: no new iteration starts once this much time is spent (the search still stops
  // at time_ms). 0 keeps the default rule: none starts after time_ms / 2.5, since an iteration
  // costs a few times the one before and one stopped midway is thrown away.
  int64_t soft_time_ms = 0;
  // Search only: when the time runs out midway through an iteration, play the best root move
  // that iteration has finished searching if it beat the previous iteration's move (searched
  // first, so it has finished too). Off by default.
  bool keep_partial_iteration = false;
  // Raised by another thread to stop the search; may be null.
  const std::atomic<bool>* stop = nullptr;
  // Leaf evaluations move by a pseudo-random amount in [-eval_noise, eval_noise], fixed per
  // position and seed (so the transposition table stays consistent). Search only.
  int eval_noise = 0;
  // Chance of playing a random legal move instead of searching. Search only.
  double random_move_chance = 0.0;
  uint64_t seed = 0;
};

// The budget of one search or solve, started when it is made.
class Budget {
 public:
  using Clock = std::chrono::steady_clock;

  Budget() = default;
  explicit Budget(const SearchLimits& limits)
      : start_(Clock::now()),
        max_nodes_(limits.max_nodes),
        time_ms_(limits.time_ms),
        stop_(limits.stop != nullptr ? limits.stop : &kNeverRaised) {}

  // The external flag (one load: no test for a missing flag).
  bool StopRaised() const { return stop_->load(std::memory_order_relaxed); }
  // `visited` nodes have used up the node budget.
  bool NodesSpent(int64_t visited) const { return max_nodes_ > 0 && visited >= max_nodes_; }
  bool TimeUp() const { return time_ms_ > 0 && ElapsedMs() >= static_cast<double>(time_ms_); }
  // Any of the three.
  bool Exhausted(int64_t visited) const { return StopRaised() || NodesSpent(visited) || TimeUp(); }

  double ElapsedMs() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
  }
  int64_t max_nodes() const { return max_nodes_; }

 private:
  static inline const std::atomic<bool> kNeverRaised{false};

  Clock::time_point start_ = Clock::now();
  int64_t max_nodes_ = 0;
  int64_t time_ms_ = 0;
  const std::atomic<bool>* stop_ = &kNeverRaised;
};

}  // namespace ply

#endif  // PLY_ENGINE_SEARCH_BUDGET_H_
