// A fixed pool of search threads behind a bounded queue. Searches are CPU-bound, so ply-bot runs
// them here (never on a gRPC thread), one per worker, and refuses work the queue cannot hold
// rather than letting it pile up. Each worker keeps its own SearchCache (transposition table,
// history) from one request to the next.
//
// Two classes of work: interactive (a person waits for the answer) and background (bot-vs-bot
// games nobody waits on). Workers always take interactive work first, and part of the pool is
// kept for it: background work never runs on more than `workers - reserved_workers` workers at
// once, nor fills more than `queue_capacity - reserved_queue` queue slots. So however much
// background work arrives, an interactive request finds a free worker (or waits only behind
// other interactive requests).
#ifndef PLY_BOT_SERVICE_WORKER_POOL_H_
#define PLY_BOT_SERVICE_WORKER_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/registry/any_game.h"

namespace ply::bot {

enum class Priority { kInteractive, kBackground };

struct WorkerPoolOptions {
  int workers = 1;
  // Tasks that may wait for a worker beyond those the idle workers take at once.
  int queue_capacity = 1;
  // Workers and queue slots background work may not take; clamped so that background work
  // keeps at least one worker (a pool that refused it outright would be a configuration error,
  // not a reservation).
  int reserved_workers = 0;
  int reserved_queue = 0;
  size_t tt_megabytes = 16;
};

class WorkerPool {
 public:
  using Task = std::function<void(SearchCache& cache)>;

  // Each worker first runs `warm_up` (when given) on its own cache, so that the first requests
  // do not pay for building search tables; the constructor returns once every worker has.
  explicit WorkerPool(const WorkerPoolOptions& options, Task warm_up = nullptr);
  // Runs what is already queued, then joins the workers.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`, or returns false at once when there is no room for its class of work.
  bool TrySubmit(Task task, Priority priority = Priority::kInteractive);

  // Blocks until no task is queued or running.
  void WaitIdle();

  int workers() const { return static_cast<int>(threads_.size()); }
  int queue_capacity() const { return queue_capacity_; }
  int reserved_workers() const { return reserved_workers_; }
  int reserved_queue() const { return reserved_queue_; }
  // Tasks waiting for a worker / being run now (both classes).
  int queued() const;
  int busy() const;
  // Background tasks waiting / running.
  int background_queued() const;
  int background_busy() const;

 private:
  void Run(size_t tt_megabytes, const Task& warm_up, std::latch& warm);
  // Whether a worker may take a task now (mu_ held).
  bool CanTake() const;

  const int queue_capacity_;
  int reserved_workers_;
  int reserved_queue_;
  mutable std::mutex mu_;
  std::condition_variable work_ready_;
  std::condition_variable idle_;
  std::deque<Task> interactive_;
  std::deque<Task> background_;
  int busy_ = 0;
  int background_busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ply::bot

#endif  // PLY_BOT_SERVICE_WORKER_POOL_H_
