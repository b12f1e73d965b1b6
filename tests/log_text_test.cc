// bot-service/log_text.h in one process: quoting and bounding request text for logs and
// errors, the rate limit, and protobuf's own lines routed through it, the way ply-lobby and
// ply-bot install it (bot_service_test checks the same flood against a real ply-bot).
#include "common/log_text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "absl/time/clock.h"
#include "ply/v1/bot.pb.h"

namespace ply {
namespace {

TEST(LogQuote, EscapesEveryByteOutsidePrintableAsciiAndBoundsTheLength) {
  EXPECT_EQ(LogQuote("connect4"), "\"connect4\"");
  EXPECT_EQ(LogQuote("a\nb\"c\\"), R"("a\nb\"c\\")");
  EXPECT_EQ(LogQuote("\u009b\u2028"), R"("\xc2\x9b\xe2\x80\xa8")");
  EXPECT_EQ(LogQuote(std::string(100, 'x'), 4), "\"xxxx\"...(100 bytes)");
}

TEST(EchoBounded, EscapesControlsAndCutsLongText) {
  EXPECT_EQ(EchoBounded("unknown 'ha\nrd'"), "unknown 'ha\\x0ard'");
  EXPECT_EQ(EchoBounded("caf\u00e9"), "caf\u00e9");
  EXPECT_EQ(EchoBounded(std::string(10, 'y'), 3), "yyy...");
}

TEST(LogRateLimit, AllowsABurstThenCountsWhatItLeftOut) {
  LogRateLimit limit(3, absl::Hours(1));
  int64_t left_out = -1;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limit.Allow(&left_out));
  EXPECT_EQ(left_out, 0);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(limit.Allow(&left_out));
  LogRateLimit quick(1, absl::Milliseconds(1));
  EXPECT_TRUE(quick.Allow(&left_out));
  EXPECT_FALSE(quick.Allow(&left_out));
  absl::SleepFor(absl::Milliseconds(5));
  EXPECT_TRUE(quick.Allow(&left_out));
  EXPECT_EQ(left_out, 1);
}

TEST(RouteProtobufLogs, AFloodOfInvalidUtf8WritesTheBurstOnly) {
  v1::ChooseMoveRequest bad;
  bad.set_difficulty("easy");
  std::string wire = bad.SerializeAsString();
  // The difficulty's bytes, made invalid UTF-8 after serializing (serializing would complain).
  wire.replace(wire.find("easy"), 4, "\xff\xfe\xfd\xfc");
  RouteProtobufLogs("test", /*burst=*/5, absl::Seconds(10));
  ::testing::internal::CaptureStderr();
  int refused = 0;
  for (int i = 0; i < 500; ++i) {
    v1::ChooseMoveRequest parsed;
    if (!parsed.ParseFromString(wire)) ++refused;
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(refused, 500);
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 5) << log;
  EXPECT_EQ(log.rfind("test: protobuf ERROR: String field 'ply.v1.ChooseMoveRequest.difficulty' "
                      "contains invalid UTF-8",
                      0),
            0u)
      << log;
}

}  // namespace
}  // namespace ply
