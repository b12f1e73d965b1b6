// A fixed pool of search threads behind a bounded queue. Searches are CPU-bound, so ply-bot runs
// them here (never on a gRPC thread), one per worker, and refuses work the queue cannot hold
// rather than letting it pile up. Each worker keeps its own SearchCache (transposition table,
// history) from one request to the next.
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

class WorkerPool {
 public:
  using Task = std::function<void(SearchCache& cache)>;

  // `queue_capacity` tasks may wait for a worker beyond those the idle workers take at once.
  // Each worker first runs `warm_up` (when given) on its own cache, so that the first requests do
  // not pay for building search tables; the constructor returns once every worker has.
  WorkerPool(int workers, int queue_capacity, size_t tt_megabytes, Task warm_up = nullptr);
  // Runs what is already queued, then joins the workers.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`, or returns false at once when every worker is busy and the queue is full.
  bool TrySubmit(Task task);

  // Blocks until no task is queued or running.
  void WaitIdle();

  int workers() const { return static_cast<int>(threads_.size()); }
  int queue_capacity() const { return queue_capacity_; }
  // Tasks waiting for a worker / being run now.
  int queued() const;
  int busy() const;

 private:
  void Run(size_t tt_megabytes, const Task& warm_up, std::latch& warm);

  const int queue_capacity_;
  mutable std::mutex mu_;
  std::condition_variable work_ready_;
  std::condition_variable idle_;
  std::deque<Task> queue_;
  int busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ply::bot

#endif  // PLY_BOT_SERVICE_WORKER_POOL_H_
