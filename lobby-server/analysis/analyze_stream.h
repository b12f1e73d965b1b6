// LobbyService.AnalyzeMatch's stream: progress events and the analysis, written one at a time
// from a queue the analyzer fills from any thread (events/write_queue.h). The service starts it
// (lobby_service.cc); the analyzer holds its sink.
#ifndef PLY_LOBBY_SERVER_ANALYSIS_ANALYZE_STREAM_H_
#define PLY_LOBBY_SERVER_ANALYSIS_ANALYZE_STREAM_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <utility>

#include "lobby-server/analysis/analyzer.h"
#include "lobby-server/events/write_queue.h"
#include "ply/v1/lobby.pb.h"

namespace ply::lobby {

class AnalysisWrites final : public AnalysisSink {
 public:
  AnalysisWrites(grpc::ServerWriteReactor<v1::AnalyzeMatchEvent>* stream, LobbyMetrics* metrics)
      : writes_(stream, metrics, Method::kAnalyzeMatch, {.replaces = &NewerProgress}) {}
  bool Send(v1::AnalyzeMatchEvent event) override { return writes_.Send(std::move(event)); }
  void Finish(const absl::Status& status) override { writes_.Finish(status); }
  bool Gone() override { return writes_.Gone(); }
  WriteQueue<v1::AnalyzeMatchEvent>& writes() { return writes_; }

  // Progress can come faster than a slow client reads: only the latest waiting one is kept.
  static bool NewerProgress(const v1::AnalyzeMatchEvent& waiting,
                            const v1::AnalyzeMatchEvent& next) {
    return waiting.has_progress() && next.has_progress();
  }

 private:
  WriteQueue<v1::AnalyzeMatchEvent> writes_;
};

using AnalyzeStream = QueuedStream<v1::AnalyzeMatchEvent, AnalysisWrites>;

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_ANALYSIS_ANALYZE_STREAM_H_
