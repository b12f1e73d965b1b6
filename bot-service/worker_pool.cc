#include "bot-service/worker_pool.h"

#include <utility>

namespace ply::bot {

WorkerPool::WorkerPool(int workers, int queue_capacity, size_t tt_megabytes, Task warm_up)
    : queue_capacity_(queue_capacity) {
  std::latch warm(workers);
  threads_.reserve(workers);
  for (int i = 0; i < workers; ++i) {
    threads_.emplace_back(
        [this, tt_megabytes, &warm_up, &warm] { Run(tt_megabytes, warm_up, warm); });
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

bool WorkerPool::TrySubmit(Task task) {
  {
    std::lock_guard lock(mu_);
    // Idle workers take queued tasks at once, so they add to what may be accepted.
    int idle = workers() - busy_;
    if (stopping_ || static_cast<int>(queue_.size()) >= queue_capacity_ + idle) return false;
    queue_.push_back(std::move(task));
  }
  work_ready_.notify_one();
  return true;
}

void WorkerPool::WaitIdle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return queue_.empty() && busy_ == 0; });
}

int WorkerPool::queued() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(queue_.size());
}

int WorkerPool::busy() const {
  std::lock_guard lock(mu_);
  return busy_;
}

void WorkerPool::Run(size_t tt_megabytes, const Task& warm_up, std::latch& warm) {
  SearchCache cache(tt_megabytes);
  if (warm_up) warm_up(cache);
  // `warm_up` and `warm` belong to the constructor, which returns once every worker is here.
  warm.count_down();
  std::unique_lock lock(mu_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left to run
    Task task = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    task(cache);
    task = nullptr;  // release what the task holds before reporting the worker free
    lock.lock();
    --busy_;
    if (queue_.empty() && busy_ == 0) idle_.notify_all();
  }
}

}  // namespace ply::bot
