// The /metrics HTTP ports as scrapers and attackers see them: ply-bot's (a real process on a
// free loopback port) serving Prometheus text, and it and the lobby's MetricsEndpoint cutting
// off a client that sends header lines without end while still answering the next scrape.
#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>

#include "common/metrics_http.h"
#include "tests/bot_helper.h"
#include "tests/raw_http.h"

namespace ply {
namespace {

using testing::Call;
using testing::RawConnection;
using testing::Request;
using testing::StartBot;

TEST(BotService, ServesPrometheusTextOverHttp) {
  auto bot = StartBot({"--metrics_port=0"});
  ASSERT_NE(bot, nullptr);
  v1::ChooseMoveResponse response;
  ASSERT_TRUE(Call(*bot, Request("tictactoe", {}, "easy", 20), 3000, &response).ok());
  const std::string& line = bot->ready_line();
  size_t at = line.find("http://");
  ASSERT_NE(at, std::string::npos) << line;
  std::string url = line.substr(at + 7);
  url = url.substr(0, url.find('/'));
  httplib::Client http(url.substr(0, url.rfind(':')), std::stoi(url.substr(url.rfind(':') + 1)));
  httplib::Result result = http.Get("/metrics");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
  EXPECT_NE(result->body.find("ply_bot_requests_total 1\n"), std::string::npos) << result->body;
  EXPECT_NE(result->body.find("ply_bot_search_ms{quantile=\"0.99\"}"), std::string::npos);
}

int MetricsPort(const std::string& ready_line) {
  const size_t at = ready_line.find("http://");
  if (at == std::string::npos) return -1;
  std::string url = ready_line.substr(at + 7);
  url = url.substr(0, url.find('/'));
  return std::stoi(url.substr(url.rfind(':') + 1));
}

TEST(BotService, AnEndlessHeaderOnTheMetricsPortIsCutOff) {
  auto bot = StartBot({"--metrics_port=0"});
  ASSERT_NE(bot, nullptr);
  const int port = MetricsPort(bot->ready_line());
  ASSERT_GT(port, 0) << bot->ready_line();
  constexpr size_t kFlood = 64 << 20;
  RawConnection flood(port);
  ASSERT_TRUE(flood.connected());
  EXPECT_LT(flood.FloodHeaders("/metrics", kFlood), kFlood) << "ply-bot read every header line";
  httplib::Client http("127.0.0.1", port);
  httplib::Result result = http.Get("/metrics");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
  v1::ChooseMoveResponse response;
  EXPECT_TRUE(Call(*bot, Request("tictactoe", {}, "easy", 20), 3000, &response).ok());
}

TEST(MetricsEndpoint, AnEndlessHeaderIsCutOff) {
  // The lobby's GET /metrics.
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start("127.0.0.1", 0, [] { return std::string("up 1\n"); });
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  constexpr size_t kFlood = 64 << 20;
  RawConnection flood((*endpoint)->port());
  ASSERT_TRUE(flood.connected());
  EXPECT_LT(flood.FloodHeaders("/metrics", kFlood), kFlood);
  httplib::Client http("127.0.0.1", (*endpoint)->port());
  httplib::Result result = http.Get("/metrics");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->body, "up 1\n");
}

}  // namespace
}  // namespace ply
