// The fixture of the tests of ply-web in front of a real stack (PostgreSQL, two ply-bot,
// ply-lobby): web_api_test (the gateway's API and event streams) and web_browser_test (the page
// in Debian's Chromium, driven by playwright-core: tests/web/scenarios.mjs). The browser tests are
// skipped when Chromium or the npm packages are not installed (deploy/install-deps.sh installs
// both). Screenshots land in build/tests/web-artifacts/.
#ifndef PLY_TESTS_WEB_FIXTURE_H_
#define PLY_TESTS_WEB_FIXTURE_H_

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/proto_convert.h"
#include "engine/registry/registry.h"
#include "nlohmann/json.hpp"
#include "tests/lobby_helper.h"
#include "tests/stack_helper.h"

namespace ply::testing {

using nlohmann::json;

inline std::string Chromium() {
  const char* env = std::getenv("PLY_CHROMIUM");
  return env != nullptr && *env != '\0' ? env : "/usr/bin/chromium";
}

// Why the browser tests cannot run here, or "" when they can.
inline std::string BrowserMissing() {
  if (access(Chromium().c_str(), X_OK) != 0) return Chromium() + " is not installed";
  if (!std::filesystem::exists(PLY_WEB_TESTS "/node_modules/playwright-core")) {
    return "playwright-core is not installed in tests/web (deploy/install-deps.sh)";
  }
  if (std::system("node --version >/dev/null 2>&1") != 0) return "node is not installed";
  return "";
}

class WebTest : public StackFixture {
 protected:
  static constexpr int kClaimAfterS = 5;

  void SetUp() override {
    absl::StatusOr<std::string> url = NewDatabase("web");
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
    // Presence is looked at often and a player who left may be claimed against after 5 s, so
    // that the presence and claim tests take seconds, not minutes.
    StartLobby({"--presence_grace_s=0.5", "--presence_poll_s=0.2",
                absl::StrCat("--claim_after_s=", kClaimAfterS)});
    // The tests' many quick requests come from one address; a page's "I am here" holds its seat
    // for 3 s.
    auto web = ServerProcess::StartPlain(
        PLY_WEB_BINARY,
        {"--port=0", "--host=127.0.0.1", absl::StrCat("--lobby=", lobby_->address()),
         "--client_rps=1000", "--client_burst=1000", "--client_streams=0", "--client_connections=0",
         "--presence_hold_s=3"});
    ASSERT_TRUE(web.ok()) << web.status();
    web_ = *std::move(web);
    base_ = absl::StrCat("http://127.0.0.1:", web_->port());
    std::filesystem::create_directories(PLY_WEB_ARTIFACTS);
  }

  // A match between two bots at `levels`, bots moving every `pacing_ms`.
  int64_t BotMatch(const std::string& game, int64_t pacing_ms,
                   std::vector<std::string> levels = {"easy", "medium"}) {
    v1::CreateMatchResponse created;
    grpc::Status s =
        Create(stub_.get(), game, {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, levels, &created,
               [&](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(pacing_ms); });
    EXPECT_TRUE(s.ok()) << s.error_message();
    return created.match().id();
  }

  v1::Match WaitFinished(int64_t id) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    v1::Match m;
    while (absl::Now() < deadline) {
      m = Get(id);
      if (m.status() == v1::MATCH_STATUS_FINISHED) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return m;
  }

  // The event stream of match `id` until `enough` says so (or it ends), as text.
  std::string Stream(int64_t id, const httplib::Headers& headers, const std::string& query,
                     const std::function<bool(const std::string&)>& enough) {
    httplib::Client c("127.0.0.1", web_->port());
    c.set_read_timeout(20, 0);
    std::string text;
    c.Get(absl::StrCat("/api/matches/", id, "/events", query).c_str(), headers,
          [&](const char* data, size_t n) {
            text.append(data, n);
            return !enough(text);
          });
    return text;
  }

  // Runs one scenario of tests/web/scenarios.mjs; its JSON report.
  json Scenario(const std::string& name, const std::vector<std::string>& args = {}) {
    std::string command = absl::StrCat("cd '", PLY_WEB_TESTS, "' && node scenarios.mjs ", name, " ",
                                       base_, " '", PLY_WEB_ARTIFACTS, "'");
    for (const std::string& a : args) absl::StrAppend(&command, " '", a, "'");
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    char buffer[4096];
    while (pipe != nullptr && fgets(buffer, sizeof(buffer), pipe) != nullptr) out += buffer;
    const int status = pipe != nullptr ? pclose(pipe) : -1;
    const std::string last =
        out.substr(out.rfind('{') == std::string::npos ? 0 : out.rfind("\n{") + 1);
    json report = json::parse(last, nullptr, false);
    EXPECT_EQ(status, 0) << out;
    EXPECT_FALSE(report.is_discarded()) << out;
    if (report.is_discarded()) return json::object();
    EXPECT_TRUE(report.value("errors", json::array()).empty()) << report.dump();
    return report;
  }

  // POST `body` to ply-web's `path`, with `token` as the seat's Bearer token when not empty.
  httplib::Result Post(const std::string& path, const std::string& token, const json& body) {
    httplib::Client c("127.0.0.1", web_->port());
    c.set_read_timeout(20, 0);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", absl::StrCat("Bearer ", token));
    return c.Post(path.c_str(), headers, body.dump(), "application/json");
  }

  // A seat resigns, over gRPC.
  void ResignSeat(int64_t id, const std::string& token) {
    grpc::Status s = ply::testing::Resign(stub_.get(), id, token);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  v1::OfferRematchResponse OfferRematch(int64_t id, const std::string& token) {
    v1::OfferRematchResponse out;
    grpc::Status s = ply::testing::OfferRematch(stub_.get(), id, token, &out);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return out;
  }

  // A Connect Four match between two people where Red (winning) leaves Yellow's three in column
  // 1 open at ply 7, an exact blunder, then analysed by the lobby: its id.
  int64_t AnalysedBlunderMatch(bool analysed = true) {
    HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "connect4");
    for (size_t i = 0; i < kBlunderGame.size(); ++i) {
      EXPECT_TRUE(
          Move(stub_.get(), seats.id, static_cast<int>(i), kBlunderGame[i], seats.tokens[i % 2])
              .ok());
    }
    if (analysed) {
      const grpc::Status s = ply::testing::Analyze(stub_.get(), seats.id).status;
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
    return seats.id;
  }
  inline static const std::vector<std::string> kBlunderGame = {"4", "1", "4", "1",
                                                               "3", "1", "7", "1"};

  std::unique_ptr<ServerProcess> web_;
  std::string base_;
};

#define SKIP_WITHOUT_BROWSER()                                  \
  if (const std::string why = BrowserMissing(); !why.empty()) { \
    GTEST_SKIP() << why;                                        \
  }

}  // namespace ply::testing

#endif  // PLY_TESTS_WEB_FIXTURE_H_
