// Transport security: certificates made at test time with the openssl command; ply-bot serving
// mutual TLS, ply-lobby serving TLS and calling its bots with a client certificate, and clients
// that are refused when they do not verify or are not verified.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bot-service/bot_client.h"
#include "common/credentials.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/postgres_helper.h"
#include "tests/process_helper.h"

namespace ply {
namespace {

using ::ply::testing::PostgresCluster;
using ::ply::testing::ServerProcess;

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char dir[] = "/tmp/ply-tls-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = new std::string(dir);
    std::ofstream(Path("san.ext")) << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    auto run = [](const std::string& cmd) {
      ASSERT_EQ(std::system((cmd + " >/dev/null 2>&1").c_str()), 0) << cmd;
    };
    for (const std::string ca : {"ca", "rogue"}) {
      run(absl::StrCat("openssl req -x509 ", key, " -keyout ", Path(ca + ".key"), " -out ",
                       Path(ca + ".pem"), " -days 2 -subj /CN=ply-test-", ca));
    }
    for (const std::string leaf : {"server", "client"}) {
      run(absl::StrCat("openssl req ", key, " -keyout ", Path(leaf + ".key"), " -out ",
                       Path(leaf + ".csr"), " -subj /CN=", leaf));
      run(absl::StrCat("openssl x509 -req -in ", Path(leaf + ".csr"), " -CA ", Path("ca.pem"),
                       " -CAkey ", Path("ca.key"), " -CAcreateserial -days 2 -out ",
                       Path(leaf + ".pem"), " -extfile ", Path("san.ext")));
    }
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static std::string Path(const std::string& name) { return absl::StrCat(*dir_, "/", name); }

  static std::shared_ptr<grpc::ChannelCredentials> Client(const std::string& ca,
                                                          bool with_cert = false) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> c =
        MakeChannelCredentials({.ca_file = Path(ca),
                                .cert_file = with_cert ? Path("client.pem") : "",
                                .key_file = with_cert ? Path("client.key") : ""});
    EXPECT_TRUE(c.ok()) << c.status();
    return *c;
  }

  // A ply-bot that requires client certificates from the test CA.
  std::unique_ptr<ServerProcess> StartBot() {
    auto bot =
        ServerProcess::Start(PLY_BOT_BINARY,
                             {"--port=0", "--host=127.0.0.1", "--workers=1", "--tt_mb=4",
                              "--log_level=error", absl::StrCat("--tls_cert=", Path("server.pem")),
                              absl::StrCat("--tls_key=", Path("server.key")),
                              absl::StrCat("--tls_client_ca=", Path("ca.pem"))},
                             absl::Seconds(15), Client("ca.pem", /*with_cert=*/true));
    EXPECT_TRUE(bot.ok()) << bot.status();
    return bot.ok() ? *std::move(bot) : nullptr;
  }

  static std::string* dir_;
};

std::string* TlsTest::dir_ = nullptr;

TEST_F(TlsTest, BotRequiresAClientCertificateFromItsCa) {
  std::unique_ptr<ServerProcess> bot = StartBot();
  ASSERT_NE(bot, nullptr);
  v1::ChooseMoveRequest request;
  request.mutable_position()->mutable_spec()->set_name("tictactoe");
  request.set_difficulty("easy");
  BotClient verified({.target = bot->address(), .credentials = Client("ca.pem", true)});
  absl::StatusOr<v1::ChooseMoveResponse> reply = verified.ChooseMove(request, absl::Seconds(5));
  EXPECT_TRUE(reply.ok()) << reply.status();

  BotClient no_cert({.target = bot->address(), .credentials = Client("ca.pem", false)});
  EXPECT_FALSE(no_cert.ChooseMove(request, absl::Seconds(2)).ok());
  BotClient plaintext({.target = bot->address()});
  EXPECT_FALSE(plaintext.ChooseMove(request, absl::Seconds(2)).ok());
  BotClient wrong_ca({.target = bot->address(), .credentials = Client("rogue.pem", true)});
  EXPECT_FALSE(wrong_ca.ChooseMove(request, absl::Seconds(2)).ok());
}

// A tic-tac-toe match between two bots, created and followed through `stub` until it ends; it
// ends by the rules only when the lobby's calls to its bots get through.
void PlayBotMatchToItsEnd(v1::LobbyService::Stub& stub) {
  v1::CreateMatchRequest create;
  create.mutable_spec()->set_name("tictactoe");
  for (int i = 0; i < 2; ++i) {
    v1::SeatSpec* seat = create.add_seats();
    seat->set_kind(v1::SEAT_KIND_BOT);
    seat->set_difficulty("easy");
  }
  v1::CreateMatchResponse created;
  {
    grpc::ClientContext c;
    c.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    grpc::Status s = stub.CreateMatch(&c, create, &created);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  v1::Match match;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  do {
    grpc::ClientContext c;
    v1::GetMatchRequest get;
    get.set_match_id(created.match().id());
    ASSERT_TRUE(stub.GetMatch(&c, get, &match).ok());
    if (match.status() == v1::MATCH_STATUS_FINISHED) break;
    absl::SleepFor(absl::Milliseconds(50));
  } while (absl::Now() < deadline);
  EXPECT_EQ(match.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_NE(match.result().reason(), v1::END_REASON_BOT_FAILURE);
}

TEST_F(TlsTest, LobbyServesTlsAndReachesBotsWithMutualTls) {
  std::unique_ptr<ServerProcess> bot = StartBot();
  ASSERT_NE(bot, nullptr);
  auto cluster = PostgresCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto url = (*cluster)->CreateDatabase("tls");
  ASSERT_TRUE(url.ok());
  auto lobby =
      ServerProcess::Start(PLY_LOBBY_BINARY,
                           {"--port=0", "--host=127.0.0.1", absl::StrCat("--database_url=", *url),
                            absl::StrCat("--bot_target=", bot->address()), "--bot_pacing_ms=0",
                            absl::StrCat("--tls_cert=", Path("server.pem")),
                            absl::StrCat("--tls_key=", Path("server.key")),
                            absl::StrCat("--bot_tls_ca=", Path("ca.pem")),
                            absl::StrCat("--bot_tls_cert=", Path("client.pem")),
                            absl::StrCat("--bot_tls_key=", Path("client.key"))},
                           absl::Seconds(20), Client("ca.pem"));
  ASSERT_TRUE(lobby.ok()) << lobby.status();

  // A client that verifies the lobby plays a bot match to its end over TLS; the bots' moves
  // prove the lobby's mutual-TLS channel to ply-bot works.
  auto stub = v1::LobbyService::NewStub(grpc::CreateChannel((*lobby)->address(), Client("ca.pem")));
  PlayBotMatchToItsEnd(*stub);

  // The ply client verifies the lobby with --tls_ca, and gets nowhere without it.
  auto ply = [&](const std::string& flags) {
    const std::string cmd = absl::StrCat(PLY_CLIENT_BINARY, " games --server=", (*lobby)->address(),
                                         " ", flags, " >/dev/null 2>&1");
    return std::system(cmd.c_str());
  };
  EXPECT_EQ(ply(absl::StrCat("--tls_ca=", Path("ca.pem"))), 0);
  EXPECT_NE(ply(""), 0);
  EXPECT_NE(ply(absl::StrCat("--tls_ca=", Path("rogue.pem"))), 0);
  // --tls without a CA verifies against the default roots: the system's bundle, which does not
  // hold the test CA, or the file GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names in its place.
  EXPECT_NE(ply("--tls"), 0);
  for (const std::string roots : {"ca.pem", "rogue.pem"}) {
    const std::string cmd =
        absl::StrCat("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=", Path(roots), " ", PLY_CLIENT_BINARY,
                     " games --tls --server=", (*lobby)->address(), " >/dev/null 2>&1");
    EXPECT_EQ(std::system(cmd.c_str()) == 0, roots == "ca.pem") << roots;
  }

  // Plaintext, or a CA the lobby's certificate does not chain to: no call gets through.
  for (auto creds : {grpc::InsecureChannelCredentials(), Client("rogue.pem")}) {
    auto other = v1::LobbyService::NewStub(grpc::CreateChannel((*lobby)->address(), creds));
    grpc::ClientContext c;
    c.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(3)));
    v1::ListGamesResponse games;
    EXPECT_EQ(other->ListGames(&c, v1::ListGamesRequest(), &games).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
}

TEST_F(TlsTest, LobbyReachesBotsThatRequireAToken) {
  const std::string token_file = Path("bot-token");
  std::ofstream(token_file) << "fedcba9876543210fedcba9876543210\n";
  auto bot = ServerProcess::Start(PLY_BOT_BINARY,
                                  {"--port=0", "--workers=2", "--tt_mb=4", "--log_level=warning",
                                   absl::StrCat("--auth_token_file=", token_file)});
  ASSERT_TRUE(bot.ok()) << bot.status();
  auto cluster = PostgresCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto url = (*cluster)->CreateDatabase("token");
  ASSERT_TRUE(url.ok());
  const std::vector<std::string> flags = {"--port=0", absl::StrCat("--database_url=", *url),
                                          absl::StrCat("--bot_target=", (*bot)->address()),
                                          "--bot_pacing_ms=0"};
  // A token file that cannot be a token stops the lobby with a sentence, not a bot failure later.
  std::ofstream(Path("short-token")) << "abc\n";
  const int refused =
      std::system(absl::StrCat(PLY_LOBBY_BINARY, " --port=0 --database_url='", *url,
                               "' --bot_target=", (*bot)->address(),
                               " --bot_token_file=", Path("short-token"), " >/dev/null 2>&1")
                      .c_str());
  EXPECT_EQ(WEXITSTATUS(refused), 2);

  std::vector<std::string> with_token = flags;
  with_token.push_back(absl::StrCat("--bot_token_file=", token_file));
  auto lobby = ServerProcess::Start(PLY_LOBBY_BINARY, with_token, absl::Seconds(20));
  ASSERT_TRUE(lobby.ok()) << lobby.status();
  // Loopback by default.
  EXPECT_NE((*lobby)->ready_line().find("listening on 127.0.0.1:"), std::string::npos)
      << (*lobby)->ready_line();
  auto stub = v1::LobbyService::NewStub((*lobby)->channel());
  PlayBotMatchToItsEnd(*stub);
}

TEST(CredentialsTest, RejectsIncompleteOrMissingFiles) {
  EXPECT_FALSE(MakeServerCredentials({.cert_file = "/nonexistent.pem", .key_file = "/x"}).ok());
  EXPECT_FALSE(MakeServerCredentials({.key_file = "/x"}).ok());
  EXPECT_FALSE(MakeChannelCredentials({.cert_file = "/x"}).ok());
  EXPECT_TRUE(MakeServerCredentials({}).ok());
}

}  // namespace
}  // namespace ply
