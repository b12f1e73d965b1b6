// The /metrics HTTP ports as scrapers and attackers see them: ply-bot's (a real process on a
// free loopback port) serving Prometheus text, and it and the lobby's MetricsEndpoint cutting
// off a client that sends header lines without end while still answering the next scrape.
#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>

#include "bot-service/bot_service.h"
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
  EXPECT_NE(result->body.find("ply_bot_search_ms_count 1\n"), std::string::npos) << result->body;
  EXPECT_NE(result->body.find("ply_bot_search_ms_sum "), std::string::npos) << result->body;
}

// Counters print exactly however large they grow. With %g (6 significant digits) 1234567
// requests read "1.23457e+06", so past a million a counter moved in steps of 10 or more and
// small error counts vanished from rate(); the GetMetrics fields, exact int64s, disagreed.
TEST(BotService, PrometheusTextPrintsCountersExactly) {
  v1::GetMetricsResponse m;
  m.set_requests(1234567);
  m.set_succeeded(1000001);
  m.set_invalid(9007199254740993);  // 2^53 + 1: beyond what a double holds exactly
  m.set_cancelled(3);
  m.set_workers(16);
  m.set_nodes_per_second(3861610.25);
  m.set_search_ms_p50(12.345);
  m.set_search_ms_mean(15.5);
  m.set_cancel_to_free_ms_mean(0.125);
  const std::string text = bot::PrometheusText(m, /*search_ms_sum=*/98765432.5,
                                               /*search_count=*/1234560);
  for (const char* line : {
           "ply_bot_requests_total 1234567\n",
           "ply_bot_succeeded_total 1000001\n",
           "ply_bot_invalid_total 9007199254740993\n",
           "ply_bot_cancelled_total 3\n",
           "ply_bot_workers 16\n",
           "ply_bot_nodes_per_second 3861610.25\n",
           "ply_bot_search_ms{quantile=\"0.5\"} 12.345\n",
           "# TYPE ply_bot_search_ms summary\n",
           "ply_bot_search_ms_sum 98765432.5\n",
           "ply_bot_search_ms_count 1234560\n",
           "ply_bot_search_ms_mean 15.5\n",
           "ply_bot_cancel_to_free_ms_mean 0.125\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
  EXPECT_EQ(text.find("e+"), std::string::npos) << text;
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
