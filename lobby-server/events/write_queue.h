// One server stream's writes, made one at a time from a queue that any thread may fill, and
// its end. Shared by the streams whose events come from other threads than gRPC's (Pair,
// AnalyzeMatch); it is held by a shared_ptr and may outlive the RPC: once the RPC is done it
// only answers that the stream is gone.
#ifndef PLY_LOBBY_SERVER_EVENTS_WRITE_QUEUE_H_
#define PLY_LOBBY_SERVER_EVENTS_WRITE_QUEUE_H_

#include <grpcpp/grpcpp.h>

#include <deque>
#include <functional>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "common/proto_convert.h"
#include "lobby-server/metrics.h"

namespace ply::lobby {

template <typename Event>
class WriteQueue {
 public:
  // Decides whether `next` may take the place of `waiting`, an event queued behind the one
  // being written (e.g. a newer progress report for an older one).
  using Replaces = bool (*)(const Event& waiting, const Event& next);

  WriteQueue(grpc::ServerWriteReactor<Event>* stream, LobbyMetrics* metrics, Method method,
             Replaces replaces = nullptr)
      : stream_(stream), metrics_(metrics), method_(method), replaces_(replaces) {}

  // Queues `event`; false once the stream is finishing or the client has left.
  bool Send(Event event) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stream_ == nullptr || finishing_ || gone_) return false;
    if (replaces_ != nullptr && writing_ && queue_.size() > 1 && replaces_(queue_.back(), event)) {
      queue_.back() = std::move(event);
      return true;
    }
    queue_.push_back(std::move(event));
    if (!writing_) {
      writing_ = true;
      stream_->StartWrite(&queue_.front());
    }
    return true;
  }
  // Ends the stream with `status` once the queued events are written.
  void Finish(const absl::Status& status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stream_ == nullptr || finishing_) return;
    finishing_ = true;
    final_ = ToGrpcStatus(status);
    if (!writing_) FinishLocked();
  }
  // The client closed the stream.
  bool Gone() {
    std::lock_guard<std::mutex> lock(mu_);
    return gone_;
  }
  // Runs `fn` (once) when the client closes the stream, at once if it has.
  void OnGone(std::function<void()> fn) {
    std::unique_lock<std::mutex> lock(mu_);
    if (gone_) {
      lock.unlock();
      fn();
      return;
    }
    on_gone_ = std::move(fn);
  }

  // The reactor's OnWriteDone.
  void WriteDone(bool ok) {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!queue_.empty()) queue_.pop_front();
    if (!ok) return;
    if (!queue_.empty() && stream_ != nullptr) {
      writing_ = true;
      stream_->StartWrite(&queue_.front());
    } else if (finishing_) {
      FinishLocked();
    }
  }
  // The reactor's OnCancel (`done` false: the client left) and OnDone (`done` true: the RPC is
  // over and the reactor about to be deleted).
  void Left(bool done) {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!finished_) gone_ = true;
      if (done) stream_ = nullptr;
      if (gone_) fn = std::move(on_gone_);
      on_gone_ = nullptr;
      if (!done && stream_ != nullptr && !finished_) {
        finished_ = true;
        stream_->Finish(grpc::Status::CANCELLED);
      }
    }
    if (fn) fn();
  }

 private:
  void FinishLocked() {
    if (finished_ || stream_ == nullptr) return;
    finished_ = true;
    metrics_->CountCall(method_, final_.error_code());
    stream_->Finish(final_);
  }

  std::mutex mu_;
  grpc::ServerWriteReactor<Event>* stream_;
  LobbyMetrics* const metrics_;
  const Method method_;
  const Replaces replaces_;
  std::deque<Event> queue_;
  bool writing_ = false;
  bool finishing_ = false;
  bool finished_ = false;
  bool gone_ = false;
  grpc::Status final_;
  std::function<void()> on_gone_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_EVENTS_WRITE_QUEUE_H_
