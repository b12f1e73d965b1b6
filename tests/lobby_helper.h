// What the lobby's end-to-end tests share: a WatchMatch stream collected on its own thread,
// what a watcher has seen, and the plain calls (create, join, move, resign) with deadlines.
#ifndef PLY_TESTS_LOBBY_HELPER_H_
#define PLY_TESTS_LOBBY_HELPER_H_

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"

namespace ply::testing {

// Collects one WatchMatch stream on its own thread.
class Watch {
 public:
  // With a seat `token`, the stream holds that seat's presence; `follow_rematch`: the stream
  // stays after the end for the rematch events.
  Watch(v1::LobbyService::Stub* stub, int64_t match_id, std::optional<int> after_ply = {},
        const std::string& token = "", bool follow_rematch = false) {
    if (!token.empty()) context_.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    v1::WatchMatchRequest request;
    request.set_match_id(match_id);
    if (after_ply) request.set_after_ply(*after_ply);
    request.set_follow_rematch(follow_rematch);
    reader_ = stub->WatchMatch(&context_, request);
    thread_ = std::thread([this] {
      v1::MatchEvent e;
      while (reader_->Read(&e)) {
        std::lock_guard<std::mutex> lock(mu_);
        events_.push_back(e);
        changed_.notify_all();
      }
      grpc::Status s = reader_->Finish();
      std::lock_guard<std::mutex> lock(mu_);
      status_ = s;
      done_ = true;
      changed_.notify_all();
    });
  }
  ~Watch() {
    context_.TryCancel();
    thread_.join();
  }
  // Waits until the stream has ended; false on timeout.
  bool WaitDone(absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [this] { return done_; });
  }
  bool WaitFor(const std::function<bool(const std::vector<v1::MatchEvent>&)>& ready,
               absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                             [&] { return ready(events_); });
  }
  std::vector<v1::MatchEvent> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  grpc::Status status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  void Cancel() { context_.TryCancel(); }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::MatchEvent>> reader_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<v1::MatchEvent> events_;
  grpc::Status status_;
  bool done_ = false;
};

// Every move a watcher has seen, from its snapshot or resync plus the moves applied after.
inline std::vector<std::string> MovesSeen(const std::vector<v1::MatchEvent>& events) {
  std::vector<std::string> moves;
  for (const v1::MatchEvent& e : events) {
    if (e.has_snapshot()) {
      moves.clear();
      for (const auto& m : e.snapshot().moves()) moves.push_back(m.move());
    } else if (e.has_move_applied()) {
      moves.push_back(e.move_applied().move().move());
    }
  }
  return moves;
}

inline bool HasGameOver(const std::vector<v1::MatchEvent>& events) {
  return !events.empty() && events.back().has_game_over();
}

inline grpc::Status Create(v1::LobbyService::Stub* stub, const std::string& game,
                           std::vector<v1::SeatKind> kinds, std::vector<std::string> levels,
                           v1::CreateMatchResponse* out,
                           std::function<void(v1::CreateMatchRequest&)> more = nullptr) {
  v1::CreateMatchRequest request;
  request.mutable_spec()->set_name(game);
  for (size_t i = 0; i < kinds.size(); ++i) {
    v1::SeatSpec* s = request.add_seats();
    s->set_kind(kinds[i]);
    if (i < levels.size()) s->set_difficulty(levels[i]);
  }
  if (more) more(request);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  return stub->CreateMatch(&context, request, out);
}

// For Create's `more`: the creator takes `seat` under `name`.
inline std::function<void(v1::CreateMatchRequest&)> TakingSeat(int seat, std::string name) {
  return [seat, name = std::move(name)](v1::CreateMatchRequest& r) {
    r.set_take_seat(seat);
    r.set_display_name(name);
  };
}

inline grpc::Status Join(v1::LobbyService::Stub* stub, int64_t id, int seat,
                         const std::string& name, v1::JoinMatchResponse* out) {
  v1::JoinMatchRequest request;
  request.set_match_id(id);
  request.set_seat(seat);
  request.set_display_name(name);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  return stub->JoinMatch(&context, request, out);
}

inline grpc::Status Move(v1::LobbyService::Stub* stub, int64_t id, int ply, const std::string& move,
                         const std::string& token, v1::MakeMoveResponse* out = nullptr) {
  v1::MakeMoveRequest request;
  request.set_match_id(id);
  request.set_expected_ply(ply);
  request.set_move(move);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  if (!token.empty()) context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
  v1::MakeMoveResponse ignored;
  return stub->MakeMove(&context, request, out != nullptr ? out : &ignored);
}

// Resigns with the seat `token`; `out`, when given, receives the match as it ended.
inline grpc::Status Resign(v1::LobbyService::Stub* stub, int64_t id, const std::string& token,
                           v1::Match* out = nullptr) {
  v1::ResignRequest request;
  request.set_match_id(id);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
  v1::Match ignored;
  return stub->Resign(&context, request, out != nullptr ? out : &ignored);
}

// Offers a rematch of the finished match `id` with the seat `token` (or, with `decline`,
// declines the opponent's offer or withdraws one's own).
inline grpc::Status OfferRematch(v1::LobbyService::Stub* stub, int64_t id, const std::string& token,
                                 v1::OfferRematchResponse* out, bool decline = false) {
  v1::OfferRematchRequest request;
  request.set_match_id(id);
  request.set_decline(decline);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  if (!token.empty()) context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
  return stub->OfferRematch(&context, request, out);
}

// What an AnalyzeMatch stream brought: its status, its progress events and the analysis.
struct Analysed {
  grpc::Status status;
  std::vector<v1::AnalysisProgress> progress;
  v1::MatchAnalysis analysis;
  bool has_analysis = false;
};

// Analyses match `id` (or, with `stored_only`, only reads a stored analysis) to the stream's end;
// `forwarded_for` ("" for none) is the client a trusted proxy would name.
inline Analysed Analyze(v1::LobbyService::Stub* stub, int64_t id, bool stored_only = false,
                        const std::string& forwarded_for = "") {
  v1::AnalyzeMatchRequest request;
  request.set_match_id(id);
  request.set_stored_only(stored_only);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
  if (!forwarded_for.empty()) context.AddMetadata("x-forwarded-for", forwarded_for);
  Analysed out;
  auto reader = stub->AnalyzeMatch(&context, request);
  v1::AnalyzeMatchEvent event;
  while (reader->Read(&event)) {
    if (event.has_progress()) out.progress.push_back(event.progress());
    if (event.has_analysis()) {
      out.analysis = event.analysis();
      out.has_analysis = true;
    }
  }
  out.status = reader->Finish();
  return out;
}

// A human-vs-human match: created with seat 0 taken ("alice") through `creator` (`more` may
// add to the request), seat 1 taken ("bob") through `joiner`, after which it is active. A failed
// call fails the test.
struct HumanSeats {
  int64_t id = 0;
  std::string tokens[2];
};
inline HumanSeats HumanMatch(v1::LobbyService::Stub* creator, v1::LobbyService::Stub* joiner,
                             const std::string& game,
                             const std::function<void(v1::CreateMatchRequest&)>& more = nullptr) {
  HumanSeats seats;
  v1::CreateMatchResponse created;
  grpc::Status s = Create(creator, game, {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                          [&](v1::CreateMatchRequest& r) {
                            r.set_take_seat(0);
                            r.set_display_name("alice");
                            if (more) more(r);
                          });
  EXPECT_TRUE(s.ok()) << s.error_message();
  v1::JoinMatchResponse joined;
  s = Join(joiner, created.match().id(), 1, "bob", &joined);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(joined.match().status(), v1::MATCH_STATUS_ACTIVE);
  seats.id = created.match().id();
  seats.tokens[0] = created.seat_token();
  seats.tokens[1] = joined.seat_token();
  return seats;
}

inline absl::StatusOr<v1::Match> GetMatch(v1::LobbyService::Stub* stub, int64_t id) {
  v1::GetMatchRequest request;
  request.set_match_id(id);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::Match match;
  grpc::Status s = stub->GetMatch(&context, request, &match);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  }
  return match;
}

// Polls GetMatch until `done` holds (or `timeout` passes): the match as last read.
inline v1::Match WaitMatch(v1::LobbyService::Stub* stub, int64_t id,
                           const std::function<bool(const v1::Match&)>& done,
                           absl::Duration timeout = absl::Seconds(60)) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::StatusOr<v1::Match> m = GetMatch(stub, id);
  while ((!m.ok() || !done(*m)) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
    m = GetMatch(stub, id);
  }
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : v1::Match();
}

// Sends the calls at once, a thread each, and counts those taken and those refused as the
// loser of a race (FAILED_PRECONDITION or ABORTED); other errors count as neither.
struct RaceCount {
  int ok = 0;
  int refused = 0;
};
inline RaceCount Race(const std::vector<std::function<grpc::Status()>>& calls) {
  std::atomic<int> ok{0}, refused{0};
  std::vector<std::thread> threads;
  for (const auto& call : calls) {
    threads.emplace_back([&, call] {
      grpc::Status s = call();
      if (s.ok()) {
        ++ok;
      } else if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
                 s.error_code() == grpc::StatusCode::ABORTED) {
        ++refused;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return {.ok = ok.load(), .refused = refused.load()};
}

}  // namespace ply::testing

#endif  // PLY_TESTS_LOBBY_HELPER_H_
