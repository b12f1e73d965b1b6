// LobbyService.AnalyzeMatch: the stream of progress events and the analysis, written one at a
// time from a queue that the analyzer fills from any thread.
#include <deque>
#include <memory>
#include <mutex>

#include "bot-service/proto_convert.h"
#include "lobby-server/analysis/analyzer.h"
#include "lobby-server/lobby_service.h"

namespace ply::lobby {
namespace {

class AnalyzeStream final : public grpc::ServerWriteReactor<v1::AnalyzeMatchEvent> {
 public:
  // The analyzer's handle on the stream; it may outlive the RPC.
  class Sink final : public AnalysisSink {
   public:
    Sink(AnalyzeStream* stream, LobbyMetrics* metrics) : stream_(stream), metrics_(metrics) {}
    bool Send(v1::AnalyzeMatchEvent event) override {
      std::lock_guard<std::mutex> lock(mu_);
      if (stream_ == nullptr || finishing_ || gone_) return false;
      // Progress can come faster than a slow client reads: keep only the latest waiting one.
      if (event.has_progress() && writing_ && queue_.size() > 1 && queue_.back().has_progress()) {
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
    void Finish(const absl::Status& status) override {
      std::lock_guard<std::mutex> lock(mu_);
      if (stream_ == nullptr || finishing_) return;
      finishing_ = true;
      final_ = ToGrpcStatus(status);
      if (!writing_) FinishLocked();
    }
    bool Gone() override {
      std::lock_guard<std::mutex> lock(mu_);
      return gone_;
    }
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
    void Left(bool done) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!finished_) gone_ = true;
      if (done) stream_ = nullptr;
      if (!done && stream_ != nullptr && !finished_) {
        finished_ = true;
        stream_->Finish(grpc::Status::CANCELLED);
      }
    }

   private:
    void FinishLocked() {
      if (finished_ || stream_ == nullptr) return;
      finished_ = true;
      metrics_->CountCall(Method::kAnalyzeMatch, final_.error_code());
      stream_->Finish(final_);
    }
    std::mutex mu_;
    AnalyzeStream* stream_;
    LobbyMetrics* metrics_;
    std::deque<v1::AnalyzeMatchEvent> queue_;
    bool writing_ = false;
    bool finishing_ = false;
    bool finished_ = false;
    bool gone_ = false;
    grpc::Status final_;
  };

  explicit AnalyzeStream(LobbyMetrics* metrics) : sink_(std::make_shared<Sink>(this, metrics)) {}
  const std::shared_ptr<Sink>& sink() { return sink_; }
  void OnWriteDone(bool ok) override { sink_->WriteDone(ok); }
  void OnCancel() override { sink_->Left(/*done=*/false); }
  void OnDone() override {
    sink_->Left(/*done=*/true);
    delete this;
  }

 private:
  std::shared_ptr<Sink> sink_;
};

}  // namespace

grpc::ServerWriteReactor<v1::AnalyzeMatchEvent>* LobbyServiceImpl::AnalyzeMatch(
    grpc::CallbackServerContext* context, const v1::AnalyzeMatchRequest* request) {
  auto* stream = new AnalyzeStream(&lobby_->metrics());
  std::shared_ptr<AnalyzeStream::Sink> sink = stream->sink();
  if (!Admit(context)) {
    sink->Finish(absl::ResourceExhaustedError("too many calls from this client: slow down"));
    return stream;
  }
  if (analyzer_ == nullptr) {
    sink->Finish(absl::UnavailableError("this lobby does not analyse matches"));
    return stream;
  }
  const int64_t id = request->match_id();
  const bool stored_only = request->stored_only();
  if (!executor_->Post([analyzer = analyzer_, sink, id, stored_only] {
        absl::Status s = analyzer->Analyze(id, stored_only, sink);
        if (!s.ok()) sink->Finish(s);
      })) {
    sink->Finish(absl::ResourceExhaustedError("the lobby is overloaded: try again shortly"));
  }
  return stream;
}

}  // namespace ply::lobby
