// The lobby behind PgBouncer. In session mode (each client connection keeps one server
// connection) everything works: two lobby instances on one database through the pooler, a
// match played through one while the other streams it to a watcher (LISTEN/NOTIFY) and drives
// nothing twice. In transaction mode the lobby refuses to start with a clear message: its
// prepared statements, its LISTEN and the advisory locks that say which instance drives a
// match need a session (the operator's guide, "Connection pooling"). Skipped, with a message,
// where pgbouncer is not installed (deploy/install-deps.sh --ha installs it).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/postgres_helper.h"
#include "tests/process_helper.h"

namespace ply {
namespace {

using ::ply::testing::FreePort;
using ::ply::testing::PostgresCluster;
using ::ply::testing::ServerProcess;

constexpr char kPgBouncer[] = "/usr/sbin/pgbouncer";

class PgBouncerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kPgBouncer)) {
      GTEST_SKIP() << "pgbouncer is not installed, so the lobby behind it is NOT tested here: "
                      "deploy/install-deps.sh --ha installs it (CI does)";
    }
    auto cluster = PostgresCluster::Start();
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->CreateDatabase("ply").ok());
    char dir[] = "/tmp/ply-pgbouncer-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    // PgBouncer refuses to run as root: as root, it runs as the postgres user.
    if (geteuid() == 0) {
      as_ = "runuser -u postgres -- ";
      ASSERT_EQ(std::system(absl::StrCat("chown postgres: ", dir_).c_str()), 0);
    }
  }

  void TearDown() override {
    for (const std::string& pidfile : pidfiles_) {
      std::system(absl::StrCat("kill $(cat ", pidfile, ") 2>/dev/null").c_str());
    }
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }

  // Starts PgBouncer in `mode` in front of the cluster's database ply: its connection string.
  std::string StartPooler(const std::string& mode) {
    const int port = FreePort();
    const std::string base = absl::StrCat(dir_, "/", mode);
    std::ofstream(base + ".users") << "\"postgres\" \"\"\n";
    std::ofstream(base + ".ini")
        << "[databases]\nply = host=127.0.0.1 port=" << cluster_->port()
        << " dbname=ply user=postgres\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = " << port
        << "\nauth_type = trust\nauth_file = " << base << ".users\npool_mode = " << mode
        << "\nmax_client_conn = 200\ndefault_pool_size = 40\nunix_socket_dir =\npidfile = " << base
        << ".pid\nlogfile = " << base
        << ".log\nignore_startup_parameters = extra_float_digits,application_name\n";
    if (!as_.empty()) std::system(absl::StrCat("chown postgres: ", base, ".*").c_str());
    EXPECT_EQ(std::system(absl::StrCat(as_, kPgBouncer, " -d ", base, ".ini").c_str()), 0);
    pidfiles_.push_back(base + ".pid");
    // A watchdog stops it once this process is gone, however the test ends.
    std::system(absl::StrCat("nohup sh -c 'while kill -0 ", getpid(),
                             " 2>/dev/null; do sleep 1; done; kill $(cat ", base,
                             ".pid)' </dev/null >/dev/null 2>&1 &")
                    .c_str());
    return absl::StrCat("host=127.0.0.1 port=", port, " dbname=ply user=postgres");
  }

  static absl::StatusOr<std::unique_ptr<ServerProcess>> StartLobby(const std::string& url) {
    return ServerProcess::Start(
        PLY_LOBBY_BINARY,
        {"--port=0", "--host=127.0.0.1", "--db_wait_s=5", absl::StrCat("--database_url=", url),
         "--client_limit_exempt=127.0.0.1"},
        absl::Seconds(20));
  }

  static grpc::Status Call(const std::function<grpc::Status(grpc::ClientContext*)>& f,
                           const std::string& token = "") {
    grpc::ClientContext c;
    c.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    if (!token.empty()) c.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    return f(&c);
  }

  std::unique_ptr<PostgresCluster> cluster_;
  std::string dir_;
  std::string as_;
  std::vector<std::string> pidfiles_;
};

TEST_F(PgBouncerTest, SessionModeServesTwoInstancesAndTheirEvents) {
  const std::string url = StartPooler("session");
  auto a = StartLobby(url);
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = StartLobby(url);
  ASSERT_TRUE(b.ok()) << b.status();
  auto stub_a = v1::LobbyService::NewStub(
      grpc::CreateChannel((*a)->address(), grpc::InsecureChannelCredentials()));
  auto stub_b = v1::LobbyService::NewStub(
      grpc::CreateChannel((*b)->address(), grpc::InsecureChannelCredentials()));

  v1::CreateMatchRequest create;
  create.mutable_spec()->set_name("tictactoe");
  create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
  create.set_take_seat(0);
  create.set_display_name("ann");
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Call([&](auto* c) { return stub_a->CreateMatch(c, create, &created); }).ok());
  const int64_t id = created.match().id();
  v1::JoinMatchRequest join;
  join.set_match_id(id);
  join.set_seat(1);
  join.set_display_name("bob");
  v1::JoinMatchResponse joined;
  ASSERT_TRUE(Call([&](auto* c) { return stub_b->JoinMatch(c, join, &joined); }).ok());
  const std::string tokens[2] = {created.seat_token(), joined.seat_token()};

  // A watcher on instance b hears the moves made through instance a.
  std::vector<std::string> heard;
  std::thread watcher([&] {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    v1::WatchMatchRequest request;
    request.set_match_id(id);
    auto reader = stub_b->WatchMatch(&context, request);
    v1::MatchEvent e;
    while (reader->Read(&e)) {
      if (e.has_move_applied()) heard.push_back(e.move_applied().move().move());
      if (e.has_game_over()) break;
    }
  });
  absl::SleepFor(absl::Milliseconds(300));
  const std::vector<std::string> moves = {"a1", "b1", "a2", "b2", "a3"};
  for (size_t i = 0; i < moves.size(); ++i) {
    v1::MakeMoveRequest move;
    move.set_match_id(id);
    move.set_expected_ply(static_cast<int>(i));
    move.set_move(moves[i]);
    v1::MakeMoveResponse r;
    grpc::Status s = Call([&](auto* c) { return stub_a->MakeMove(c, move, &r); }, tokens[i % 2]);
    ASSERT_TRUE(s.ok()) << moves[i] << ": " << s.error_message();
  }
  watcher.join();
  EXPECT_EQ(heard, moves) << "the other instance's watcher, through LISTEN behind the pooler";
  EXPECT_EQ(cluster_->Query("ply", "SELECT count(*) FROM moves"), "5");
  EXPECT_EQ(cluster_->Query("ply", "SELECT status FROM matches"), "3");
}

TEST_F(PgBouncerTest, TransactionModeIsRefusedAtStartWithAClearMessage) {
  const std::string url = StartPooler("transaction");
  std::string out;
  FILE* p =
      popen(absl::StrCat("timeout 30 ", PLY_LOBBY_BINARY,
                         " --port=0 --host=127.0.0.1 --db_wait_s=5 '--database_url=", url, "' 2>&1")
                .c_str(),
            "r");
  ASSERT_NE(p, nullptr);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), p)) > 0) out.append(buffer, n);
  const int status = pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 124)
      << "the lobby did not stop at start behind transaction pooling, which cannot keep its "
         "prepared statements, LISTEN or advisory locks:\n"
      << out;
  EXPECT_NE(out.find("needs session pooling"), std::string::npos) << out;
}

}  // namespace
}  // namespace ply
