// Where the lobby's bots are. A fixed target ("host:port", "ipv4:a:p,b:p", "dns:///name:port")
// gives one BotClient for the life of the process; with DNS, round_robin re-resolves when an
// instance's connection ages out, which is how Compose and Kubernetes add instances. A target
// "file:PATH" names a file listing instances (host:port, one per line or comma-separated),
// re-read every second: rewriting it adds or removes instances of a running lobby, which is how
// the local stack scales without DNS.
#ifndef PLY_LOBBY_SERVER_BOT_TARGETS_H_
#define PLY_LOBBY_SERVER_BOT_TARGETS_H_

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "bot-service/bot_client.h"

namespace ply::lobby {

class BotTargets {
 public:
  // `credentials`: plaintext when null. `token`: the instances' shared token (ply-bot
  // --auth_token_file), sent with every call; empty: none.
  static absl::StatusOr<std::unique_ptr<BotTargets>> Create(
      const std::string& target, std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr,
      std::string token = "");
  ~BotTargets();

  // The client for the instances known now. Calls already made on an older client go on.
  std::shared_ptr<BotClient> Current();
  // The gRPC target the current client uses.
  std::string Describe();

 private:
  BotTargets(std::string file, std::shared_ptr<grpc::ChannelCredentials> credentials,
             std::string token)
      : file_(std::move(file)), credentials_(std::move(credentials)), token_(std::move(token)) {}
  // Reads the file; true when the instance list changed.
  bool Reload();
  void Watch();

  const std::string file_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const std::string token_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::string target_;
  std::shared_ptr<BotClient> client_;
  std::thread watcher_;
};

// "ipv4:127.0.0.1:50051,127.0.0.1:50052" from a list of instances in text (lines or commas;
// '#' starts a comment). Empty when there are none.
std::string TargetFromList(const std::string& text);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_BOT_TARGETS_H_
