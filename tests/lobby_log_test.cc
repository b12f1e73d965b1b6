// ply-lobby's stderr under a flood of requests that protobuf refuses to parse (a string field
// with invalid UTF-8): protobuf logs one line per such request, before any per-client limit, so
// the lobby routes those lines through a rate limit (bot-service/log_text.h). A real ply-lobby
// process over a throwaway PostgreSQL cluster, no bots.
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/postgres_helper.h"
#include "tests/process_helper.h"

namespace ply {
namespace {

using ::ply::testing::PostgresCluster;
using ::ply::testing::ServerProcess;

TEST(LobbyLog, AFloodOfInvalidUtf8WritesABoundedNumberOfLines) {
  auto cluster = PostgresCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto url = (*cluster)->CreateDatabase("log");
  ASSERT_TRUE(url.ok()) << url.status();
  const std::string log = absl::StrCat(::testing::TempDir(), "/lobby-log-", getpid());
  // The lobby's stderr goes to `log`; exec keeps the shell's pid for the lobby.
  auto lobby = ServerProcess::Start(
      "/bin/sh",
      {"-c",
       absl::StrCat("exec ", PLY_LOBBY_BINARY, " --port=0 --database_url='", *url, "' 2>", log)},
      absl::Seconds(20));
  ASSERT_TRUE(lobby.ok()) << lobby.status();
  auto stub = v1::LobbyService::NewStub((*lobby)->channel());
  constexpr int kRequests = 300;
  int refused = 0;
  // This process serializes the same bad strings and protobuf complains here too: silenced, so
  // that the test's own output stays readable.
  google::protobuf::LogHandler* const before = google::protobuf::SetLogHandler(nullptr);
  for (int i = 0; i < kRequests; ++i) {
    v1::ListMatchesRequest request;
    request.set_game("connect4\xff\xfe");
    v1::ListMatchesResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
    if (!stub->ListMatches(&context, request, &response).ok()) ++refused;
  }
  google::protobuf::SetLogHandler(before);
  EXPECT_EQ(refused, kRequests);
  lobby->reset();
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  std::vector<std::string> protobuf_lines;
  for (absl::string_view line : absl::StrSplit(text.str(), '\n', absl::SkipEmpty())) {
    if (absl::StrContains(line, "protobuf")) protobuf_lines.emplace_back(line);
  }
  // Ten at once, then one per ten seconds.
  EXPECT_GE(protobuf_lines.size(), 1u);
  EXPECT_LE(protobuf_lines.size(), 11u) << text.str();
  for (const std::string& line : protobuf_lines) {
    EXPECT_TRUE(absl::StartsWith(line, "ply-lobby: protobuf ERROR: ")) << line;
  }
  std::printf("%d invalid-UTF-8 requests wrote %zu protobuf lines to the lobby's log\n", kRequests,
              protobuf_lines.size());
  std::remove(log.c_str());
}

}  // namespace
}  // namespace ply
