// A fixed set of threads that run the lobby's blocking work (database calls, match logic) off
// the gRPC threads, and timed tasks (clock flags, bot pacing, retry backoff). Tasks run in order
// of their due time, first come first served: a task posted now waits behind everything that
// fell due before it, so a flood of calls cannot starve bot replies or clock flags (nor the
// reverse). A task posted for later runs no earlier than its time.
#ifndef PLY_LOBBY_SERVER_EXECUTOR_H_
#define PLY_LOBBY_SERVER_EXECUTOR_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "absl/time/time.h"

namespace ply::lobby {

class Executor {
 public:
  using Task = std::function<void()>;

  // `max_queued` bounds tasks due now that wait for a thread; Post refuses more.
  Executor(int threads, int max_queued);
  // Drops tasks not yet due, finishes those running, joins the threads.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs `task` as soon as a thread is free; false when the queue is full or stopping.
  bool Post(Task task);
  // Runs `task` at `when` (or as soon after as a thread is free). Timed tasks are not bounded:
  // the lobby posts at most a few per live match.
  void PostAt(absl::Time when, Task task);
  void Stop();

 private:
  struct Entry {
    absl::Time when;
    uint64_t order;
    Task task;
    // Posted with Post, and so counted against max_queued.
    bool counted;
    bool operator>(const Entry& o) const {
      return when != o.when ? when > o.when : order > o.order;
    }
  };
  void Run();

  const int max_queued_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue_;
  int due_now_ = 0;
  uint64_t next_order_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_EXECUTOR_H_
