// LobbyService.AnalyzeMatch: the stream of progress events and the analysis, written one at a
// time from a queue that the analyzer fills from any thread.
#include <functional>
#include <memory>
#include <utility>

#include "common/proto_convert.h"
#include "lobby-server/analysis/analyzer.h"
#include "lobby-server/events/write_queue.h"
#include "lobby-server/lobby_service.h"

namespace ply::lobby {
namespace {

class AnalyzeStream final : public grpc::ServerWriteReactor<v1::AnalyzeMatchEvent> {
 public:
  // The analyzer's handle on the stream; it may outlive the RPC.
  class Sink final : public AnalysisSink {
   public:
    Sink(AnalyzeStream* stream, LobbyMetrics* metrics)
        : writes_(stream, metrics, Method::kAnalyzeMatch, &NewerProgress) {}
    bool Send(v1::AnalyzeMatchEvent event) override { return writes_.Send(std::move(event)); }
    void Finish(const absl::Status& status) override { writes_.Finish(status); }
    bool Gone() override { return writes_.Gone(); }
    WriteQueue<v1::AnalyzeMatchEvent>& writes() { return writes_; }

   private:
    // Progress can come faster than a slow client reads: keep only the latest waiting one.
    static bool NewerProgress(const v1::AnalyzeMatchEvent& waiting,
                              const v1::AnalyzeMatchEvent& next) {
      return waiting.has_progress() && next.has_progress();
    }
    WriteQueue<v1::AnalyzeMatchEvent> writes_;
  };

  explicit AnalyzeStream(LobbyMetrics* metrics) : sink_(std::make_shared<Sink>(this, metrics)) {}
  const std::shared_ptr<Sink>& sink() { return sink_; }
  // Runs once the RPC is over (gives back the client's stream slot).
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
  // An analysis stream (one waiting for another's analysis too) is held open like a watch and
  // counts against the same per-client cap.
  if (!HoldStreamSlot(*context, stream, *sink)) return stream;
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
