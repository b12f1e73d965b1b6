#include "bot-service/worker_pool.h"

#include <algorithm>
#include <utility>

namespace ply::bot {

WorkerPool::WorkerPool(const WorkerPoolOptions& options, Task warm_up)
    : queue_capacity_(std::max(0, options.queue_capacity)) {
  const int workers = std::max(1, options.workers);
  reserved_workers_ = std::clamp(options.reserved_workers, 0, workers - 1);
  reserved_queue_ = std::clamp(options.reserved_queue, 0, queue_capacity_);
  std::latch warm(workers);
  threads_.reserve(workers);
  for (int i = 0; i < workers; ++i) {
    threads_.emplace_back(
        [this, tt = options.tt_megabytes, &warm_up, &warm] { Run(tt, warm_up, warm); });
  }
  warm.wait();
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool WorkerPool::TrySubmit(Task task, Priority priority) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    const int waiting = static_cast<int>(interactive_.size() + background_.size());
    if (priority == Priority::kInteractive) {
      // Idle workers take queued tasks at once, so they add to what may be accepted. Waiting
      // background tasks count against the queue too, but never more than their share of it,
      // so the reserved slots stay free for this.
      const int idle = workers() - busy_;
      if (static_cast<int>(interactive_.size()) +
              std::min<int>(background_.size(), queue_capacity_ - reserved_queue_) >=
          queue_capacity_ + idle) {
        return false;
      }
      interactive_.push_back(std::move(task));
    } else {
      // Background work may hold its own workers and its own part of the queue, no more.
      const int own = (workers() - reserved_workers_) + (queue_capacity_ - reserved_queue_);
      if (background_busy_ + static_cast<int>(background_.size()) >= own ||
          waiting >= queue_capacity_ + (workers() - busy_)) {
        return false;
      }
      background_.push_back(std::move(task));
    }
  }
  work_ready_.notify_all();
  return true;
}

void WorkerPool::WaitIdle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return interactive_.empty() && background_.empty() && busy_ == 0; });
}

int WorkerPool::queued() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(interactive_.size() + background_.size());
}

int WorkerPool::busy() const {
  std::lock_guard lock(mu_);
  return busy_;
}

int WorkerPool::background_queued() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(background_.size());
}

int WorkerPool::background_busy() const {
  std::lock_guard lock(mu_);
  return background_busy_;
}

bool WorkerPool::CanTake() const {
  return !interactive_.empty() ||
         (!background_.empty() && background_busy_ < workers() - reserved_workers_);
}

void WorkerPool::Run(size_t tt_megabytes, const Task& warm_up, std::latch& warm) {
  SearchCache cache(tt_megabytes);
  if (warm_up) warm_up(cache);
  // `warm_up` and `warm` belong to the constructor, which returns once every worker is here.
  warm.count_down();
  std::unique_lock lock(mu_);
  for (;;) {
    // Stopping still runs what was queued: those callers wait for an answer.
    work_ready_.wait(lock, [this] {
      return CanTake() || (stopping_ && interactive_.empty() && background_.empty());
    });
    if (!CanTake()) return;  // stopping, nothing left to run
    const bool background = interactive_.empty();
    std::deque<Task>& from = background ? background_ : interactive_;
    Task task = std::move(from.front());
    from.pop_front();
    ++busy_;
    if (background) ++background_busy_;
    lock.unlock();
    task(cache);
    task = nullptr;  // release what the task holds before reporting the worker free
    lock.lock();
    --busy_;
    if (background) --background_busy_;
    // A background task may have been waiting for this worker's place, and while stopping, a
    // worker that found only such tasks waits to see the queues empty before it leaves.
    if (!background_.empty() || stopping_) work_ready_.notify_all();
    if (interactive_.empty() && background_.empty() && busy_ == 0) idle_.notify_all();
  }
}

}  // namespace ply::bot
