#include "lobby-server/bot_targets.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ply::lobby {

std::string TargetFromList(const std::string& text) {
  std::vector<std::string> instances;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = line.substr(0, line.find('#'));
    for (absl::string_view item : absl::StrSplit(line, absl::ByAnyChar(", \t"))) {
      item = absl::StripAsciiWhitespace(item);
      if (!item.empty()) instances.emplace_back(item);
    }
  }
  if (instances.empty()) return "";
  return absl::StrCat("ipv4:", absl::StrJoin(instances, ","));
}

absl::StatusOr<std::unique_ptr<BotTargets>> BotTargets::Create(
    const std::string& target, std::shared_ptr<grpc::ChannelCredentials> credentials,
    std::string token) {
  if (target.rfind("file:", 0) != 0) {
    auto fixed = std::unique_ptr<BotTargets>(new BotTargets("", credentials, token));
    fixed->target_ = target;
    fixed->client_ = std::make_shared<BotClient>(BotClientOptions{
        .target = target, .credentials = std::move(credentials), .token = std::move(token)});
    return fixed;
  }
  auto watched = std::unique_ptr<BotTargets>(
      new BotTargets(target.substr(5), std::move(credentials), std::move(token)));
  if (std::ifstream(watched->file_).fail()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", watched->file_));
  }
  watched->Reload();
  watched->watcher_ = std::thread([w = watched.get()] { w->Watch(); });
  return watched;
}

BotTargets::~BotTargets() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

std::shared_ptr<BotClient> BotTargets::Current() {
  std::lock_guard<std::mutex> lock(mu_);
  return client_;
}

std::string BotTargets::Describe() {
  std::lock_guard<std::mutex> lock(mu_);
  return file_.empty() ? target_ : absl::StrCat(target_, " (from ", file_, ")");
}

bool BotTargets::Reload() {
  std::ifstream in(file_);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  std::string target = TargetFromList(text.str());
  std::lock_guard<std::mutex> lock(mu_);
  // An empty or half-written file keeps the instances we had.
  if (target.empty() || target == target_) return false;
  target_ = target;
  client_ = std::make_shared<BotClient>(
      BotClientOptions{.target = target, .credentials = credentials_, .token = token_});
  return true;
}

void BotTargets::Watch() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) return;
    }
    if (Reload()) std::fprintf(stderr, "ply-lobby: bot instances now %s\n", Describe().c_str());
  }
}

}  // namespace ply::lobby
