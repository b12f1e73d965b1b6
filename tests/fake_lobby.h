// A LobbyService of the tests' own, served in the test's process on a loopback port, for the
// clients' tests (the link, ply-web's hub and gateway): GetMatch answers with the match id and
// the instance's name as the game; WatchMatch runs a script. Either one function serves every
// WatchMatch call (given the call's number, from 1), or each call takes the next script of a
// queue that several instances may share, so that a stream can move from one to another.
#ifndef PLY_TESTS_FAKE_LOBBY_H_
#define PLY_TESTS_FAKE_LOBBY_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"

namespace ply::testing {

class FakeLobby final : public v1::LobbyService::Service {
 public:
  using Writer = grpc::ServerWriter<v1::MatchEvent>;
  using Watch = std::function<grpc::Status(int call, grpc::ServerContext*, Writer*)>;
  using Script = std::function<grpc::Status(grpc::ServerContext*, Writer*)>;

  explicit FakeLobby(std::string name, Watch every_watch = nullptr)
      : name_(std::move(name)), every_watch_(std::move(every_watch)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  explicit FakeLobby(Watch every_watch) : FakeLobby("fake", std::move(every_watch)) {}
  ~FakeLobby() override { Stop(); }

  // Stops serving: calls still open are cancelled after 100 ms.
  void Stop() {
    if (server_ == nullptr) return;
    server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Milliseconds(100)));
    server_.reset();
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  // WatchMatch calls this instance took.
  int calls() const { return calls_.load(); }

  // This instance takes its scripts from `other`'s queue from now on.
  void ShareScriptsWith(const FakeLobby& other) { queue_ = other.queue_; }
  void AddScript(Script script) {
    std::lock_guard<std::mutex> lock(queue_->mu);
    queue_->scripts.push_back(std::move(script));
  }
  // The after_ply of every WatchMatch call the queue served (-1: none), in order.
  std::vector<int> after_plies() const {
    std::lock_guard<std::mutex> lock(queue_->mu);
    return queue_->after_plies;
  }

  grpc::Status GetMatch(grpc::ServerContext*, const v1::GetMatchRequest* request,
                        v1::Match* match) override {
    match->set_id(request->match_id());
    match->mutable_spec()->set_name(name_);
    return grpc::Status::OK;
  }

  grpc::Status WatchMatch(grpc::ServerContext* context, const v1::WatchMatchRequest* request,
                          Writer* writer) override {
    const int call = ++calls_;
    if (every_watch_) return every_watch_(call, context, writer);
    Script script;
    {
      std::lock_guard<std::mutex> lock(queue_->mu);
      queue_->after_plies.push_back(request->has_after_ply() ? request->after_ply() : -1);
      if (queue_->scripts.empty())
        return grpc::Status(grpc::StatusCode::INTERNAL, "no script left");
      script = std::move(queue_->scripts.front());
      queue_->scripts.erase(queue_->scripts.begin());
    }
    return script(context, writer);
  }

 private:
  struct Queue {
    std::mutex mu;
    std::vector<Script> scripts;
    std::vector<int> after_plies;
  };
  const std::string name_;
  const Watch every_watch_;
  std::shared_ptr<Queue> queue_ = std::make_shared<Queue>();
  std::atomic<int> calls_{0};
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace ply::testing

#endif  // PLY_TESTS_FAKE_LOBBY_H_
