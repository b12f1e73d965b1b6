#include "lobby-server/executor.h"

#include <utility>

#include "absl/time/clock.h"

namespace ply::lobby {

Executor::Executor(int threads, int max_queued) : max_queued_(max_queued) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

Executor::~Executor() { Stop(); }

void Executor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool Executor::Post(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || due_now_ >= max_queued_) return false;
    ++due_now_;
    queue_.push({absl::Now(), next_order_++, std::move(task), /*counted=*/true});
  }
  changed_.notify_one();
  return true;
}

void Executor::PostAt(absl::Time when, Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    queue_.push({when, next_order_++, std::move(task), /*counted=*/false});
  }
  changed_.notify_one();
}

void Executor::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      changed_.wait(lock);
      continue;
    }
    const absl::Time when = queue_.top().when;
    if (when > absl::Now()) {
      changed_.wait_until(lock, absl::ToChronoTime(when));
      continue;
    }
    Task task = std::move(const_cast<Entry&>(queue_.top()).task);
    if (queue_.top().counted) --due_now_;
    queue_.pop();
    // Another thread may take the next task while this one runs.
    if (!queue_.empty()) changed_.notify_one();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace ply::lobby
