// One server stream's writes, made one at a time from a queue that any thread may fill, and
// its end: the writer of every lobby stream whose events come from other threads than gRPC's
// (WatchMatch, Pair, AnalyzeMatch). It is held by a shared_ptr and may outlive the RPC: once the
// RPC is done it only answers that the stream is gone. A queue with a capacity ends a stream
// whose client falls that far behind (RESOURCE_EXHAUSTED, with `overflow` as the sentence).
#ifndef PLY_LOBBY_SERVER_EVENTS_WRITE_QUEUE_H_
#define PLY_LOBBY_SERVER_EVENTS_WRITE_QUEUE_H_

#include <grpcpp/grpcpp.h>

#include <deque>
#include <functional>
#include <memory>
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

  // Stamps an event with its number on this stream (1, 2, ...) as it is queued.
  using Stamp = void (*)(Event& event, int64_t sequence);

  struct Options {
    Replaces replaces = nullptr;
    Stamp stamp = nullptr;
    // Events queued at most (0: no bound), and the sentence the stream ends with past it.
    int capacity = 0;
    const char* overflow = "this stream fell too far behind";
  };

  WriteQueue(grpc::ServerWriteReactor<Event>* stream, LobbyMetrics* metrics, Method method,
             Options options = {})
      : stream_(stream), metrics_(metrics), method_(method), options_(options) {}

  // Queues `event`; false once the stream is finishing or the client has left (or it fell
  // behind by `capacity` events: then it ends).
  bool Send(Event event) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stream_ == nullptr || finishing_ || finished_ || gone_) return false;
    if (options_.replaces != nullptr && writing_ && queue_.size() > 1 &&
        options_.replaces(queue_.back(), event)) {
      queue_.back() = std::move(event);
      return true;
    }
    if (options_.capacity > 0 && static_cast<int>(queue_.size()) >= options_.capacity) {
      finishing_ = true;
      final_ = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, options_.overflow);
      FinishLocked();
      return false;
    }
    if (options_.stamp != nullptr) options_.stamp(event, ++sequence_);
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
  // Nothing more will be written: the stream ended, for whatever reason, or the RPC is over.
  bool Closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_ || stream_ == nullptr;
  }
  // Runs `fn` (once) when the RPC is over, however it ended; at once if it is.
  void WhenDone(std::function<void()> fn) {
    std::unique_lock<std::mutex> lock(mu_);
    if (done_) {
      lock.unlock();
      fn();
      return;
    }
    when_done_ = std::move(fn);
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
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      if (!queue_.empty()) queue_.pop_front();
      if (!ok) {
        // The client went away: nothing more can be written.
        if (!finished_) {
          gone_ = true;
          fn = std::move(on_gone_);
          on_gone_ = nullptr;
          final_ = grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
          FinishLocked();
        }
      } else if (!queue_.empty() && stream_ != nullptr && !finished_) {
        writing_ = true;
        stream_->StartWrite(&queue_.front());
      } else if (finishing_) {
        FinishLocked();
      }
    }
    if (fn) fn();
  }
  // The reactor's OnCancel (`done` false: the client left) and OnDone (`done` true: the RPC is
  // over and the reactor about to be deleted).
  void Left(bool done) {
    std::function<void()> gone_fn, done_fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!finished_) gone_ = true;
      if (gone_) gone_fn = std::move(on_gone_);
      on_gone_ = nullptr;
      if (!done && stream_ != nullptr && !finished_) {
        final_ = grpc::Status::CANCELLED;
        FinishLocked();
      }
      if (done) {
        stream_ = nullptr;
        finished_ = true;
        done_ = true;
        queue_.clear();
        done_fn = std::move(when_done_);
        when_done_ = nullptr;
      }
    }
    if (gone_fn) gone_fn();
    if (done_fn) done_fn();
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
  const Options options_;
  std::deque<Event> queue_;
  int64_t sequence_ = 0;
  bool writing_ = false;
  bool finishing_ = false;
  bool finished_ = false;
  bool gone_ = false;
  bool done_ = false;
  grpc::Status final_;
  std::function<void()> on_gone_;
  std::function<void()> when_done_;
};

// The reactor of such a stream: gRPC's callbacks go to the WriteQueue of a Sink that the lobby
// holds (a shared_ptr, so it may outlive the RPC). `Sink` is built from this reactor and
// `args`, and has writes(). Deletes itself when the RPC is over, after `on_done`.
template <typename Event, typename Sink>
class QueuedStream final : public grpc::ServerWriteReactor<Event> {
 public:
  template <typename... Args>
  explicit QueuedStream(Args&&... args)
      : sink_(std::make_shared<Sink>(this, std::forward<Args>(args)...)) {}
  const std::shared_ptr<Sink>& sink() { return sink_; }
  // Runs once the RPC is over (it gives back the client's stream slot).
  void set_on_done(std::function<void()> fn) { on_done_ = std::move(fn); }
  void OnWriteDone(bool ok) override { sink_->writes().WriteDone(ok); }
  void OnCancel() override { sink_->writes().Left(/*done=*/false); }
  void OnDone() override {
    sink_->writes().Left(/*done=*/true);
    if (on_done_) on_done_();
    delete this;
  }

 private:
  std::shared_ptr<Sink> sink_;
  std::function<void()> on_done_;
};

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_EVENTS_WRITE_QUEUE_H_
