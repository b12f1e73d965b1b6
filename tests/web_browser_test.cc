// ply-web in front of a real stack (PostgreSQL, two ply-bot, ply-lobby): its event streams resume
// from the last ply and keep a bot's thinking from its opponent, and the page does what people
// do with it in Debian's Chromium, driven by playwright-core (tests/web/scenarios.mjs). The
// browser tests are skipped when Chromium or the npm packages are not installed
// (deploy/install-deps.sh installs both). Screenshots land in build/tests/web-artifacts/.
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
namespace {

using nlohmann::json;
using v1::SEAT_KIND_BOT;
using v1::SEAT_KIND_HUMAN;

std::string Chromium() {
  const char* env = std::getenv("PLY_CHROMIUM");
  return env != nullptr && *env != '\0' ? env : "/usr/bin/chromium";
}

// Why the browser tests cannot run here, or "" when they can.
std::string BrowserMissing() {
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
    grpc::Status s = Create(stub_.get(), game, {SEAT_KIND_BOT, SEAT_KIND_BOT}, levels, &created,
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

TEST_F(WebTest, EventStreamResumesAfterTheLastPly) {
  const int64_t id = BotMatch("connect4", 0);
  const v1::Match done = WaitFinished(id);
  ASSERT_EQ(done.status(), v1::MATCH_STATUS_FINISHED);
  auto ended = [](const std::string& t) { return t.find("event: end") != std::string::npos; };

  const std::string whole = Stream(id, {}, "", ended);
  EXPECT_NE(whole.find("event: snapshot"), std::string::npos);

  const std::string resumed = Stream(id, {{"Last-Event-ID", "3"}}, "", ended);
  EXPECT_EQ(resumed.find("event: snapshot"), std::string::npos);
  EXPECT_EQ(resumed.find("id: 3\n"), std::string::npos);
  EXPECT_NE(resumed.find(absl::StrCat("id: 4\nevent: move\ndata: {\"move\":{\"bot\"")),
            std::string::npos);
  EXPECT_NE(resumed.find(absl::StrCat("id: ", done.moves_size(), "\nevent: move")),
            std::string::npos);
  // ?after= does the same for a client that cannot set the header.
  EXPECT_EQ(Stream(id, {}, "?after=3", ended), resumed);
}

TEST_F(WebTest, AQuietStreamGetsKeepAlivesNotTheMatchAgain) {
  web_.reset();
  auto web = ServerProcess::StartPlain(
      PLY_WEB_BINARY, {"--port=0", "--host=127.0.0.1", absl::StrCat("--lobby=", lobby_->address()),
                       "--keepalive_s=1"});
  ASSERT_TRUE(web.ok()) << web.status();
  web_ = *std::move(web);
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(stub_.get(), "connect4", {SEAT_KIND_HUMAN, SEAT_KIND_HUMAN}, {}, &created,
                     TakingSeat(0, "ann"))
                  .ok());
  const std::string text = Stream(created.match().id(), {}, "", [](const std::string& t) {
    return absl::StrContains(t, ": keep-alive\n\n: keep-alive\n\n");
  });
  EXPECT_EQ(text.find("event: snapshot"), text.rfind("event: snapshot"));
}

TEST_F(WebTest, PlayersDoNotSeeTheBotsThinkingWhileTheMatchIsOn) {
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(stub_.get(), "connect4", {SEAT_KIND_HUMAN, SEAT_KIND_BOT}, {"", "easy"},
                     &created, TakingSeat(0, "ann"))
                  .ok());
  const int64_t id = created.match().id();
  ASSERT_TRUE(Move(stub_.get(), id, 0, "4", created.seat_token()).ok());
  auto two_moves = [](const std::string& t) {
    return t.find("id: 2\nevent:") != std::string::npos;
  };
  const std::string player = Stream(id, {}, "?view=player&after=0", two_moves);
  const std::string spectator = Stream(id, {}, "?after=0", two_moves);
  EXPECT_NE(player.find("\"instance\""), std::string::npos);
  EXPECT_EQ(player.find("\"depth\""), std::string::npos);
  EXPECT_NE(spectator.find("\"depth\""), std::string::npos);
  // Nobody's stream carries a seat token.
  EXPECT_EQ(player.find(created.seat_token()), std::string::npos);
}

TEST_F(WebTest, ReplayCarriesEachMovesMarkOnceTheMatchIsAnalysed) {
  // Red, winning, leaves Yellow's three in column 1 open (7): an exact blunder.
  HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "connect4");
  const std::vector<std::string>& moves = kBlunderGame;
  for (size_t i = 0; i < moves.size(); ++i) {
    ASSERT_TRUE(
        Move(stub_.get(), seats.id, static_cast<int>(i), moves[i], seats.tokens[i % 2]).ok());
  }
  httplib::Client c("127.0.0.1", web_->port());
  const std::string path = absl::StrCat("/api/matches/", seats.id, "/replay");
  httplib::Result before = c.Get(path.c_str());
  ASSERT_TRUE(before && before->status == 200);
  EXPECT_FALSE(json::parse(before->body).contains("analysis")) << before->body;
  const grpc::Status analysed = ply::testing::Analyze(stub_.get(), seats.id).status;
  ASSERT_TRUE(analysed.ok()) << analysed.error_message();
  httplib::Result after = c.Get(path.c_str());
  ASSERT_TRUE(after && after->status == 200);
  const json replay = json::parse(after->body);
  ASSERT_EQ(replay["analysis"]["moves"].size(), moves.size()) << after->body;
  EXPECT_EQ(replay["analysis"]["moves"][6]["mark"], "??");
  EXPECT_EQ(replay["analysis"]["moves"][6]["best"], "1");
  EXPECT_EQ(replay["analysis"]["moves"][6]["exact"], true);
  EXPECT_EQ(replay["analysis"]["players"][0]["blunders"], 1);
}

TEST_F(WebTest, APagesBeatsHoldItsSeatPresentAndAClaimWaitsUntilItLeaves) {
  // Alice and Bob have both moved; Bob (seat 1) is to move and plays through ply-web.
  HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "connect4");
  ASSERT_TRUE(Move(stub_.get(), seats.id, 0, "4", seats.tokens[0]).ok());
  ASSERT_TRUE(Move(stub_.get(), seats.id, 1, "4", seats.tokens[1]).ok());
  ASSERT_TRUE(Move(stub_.get(), seats.id, 2, "3", seats.tokens[0]).ok());
  const std::string presence = absl::StrCat("/api/matches/", seats.id, "/presence");
  const std::string claim = absl::StrCat("/api/matches/", seats.id, "/claim");
  httplib::Result beat = Post(presence, seats.tokens[1], json::object());
  ASSERT_TRUE(beat);
  ASSERT_EQ(beat->status, 200) << beat->body;
  EXPECT_EQ(json::parse(beat->body)["beat_ms"], 1000);
  EXPECT_NEAR(json::parse(beat->body)["now_ms"].get<double>(), absl::ToUnixMillis(absl::Now()),
              5000);
  // Well past the lobby's grace after Bob's last call: only the hold keeps him here, and the
  // lobby has taken it.
  for (int i = 0; i < 4; ++i) {
    absl::SleepFor(absl::Milliseconds(500));
    beat = Post(presence, seats.tokens[1], json{{"here", true}});
    ASSERT_TRUE(beat);
    ASSERT_EQ(beat->status, 200);
  }
  EXPECT_EQ(json::parse(beat->body)["held"], true) << beat->body;
  httplib::Result early = Post(claim, seats.tokens[0], json::object());
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 409);
  EXPECT_NE(early->body.find("still connected"), std::string::npos) << early->body;

  // A token of another match, or one the lobby never made, or a match that is not there, holds
  // nothing: Bob's is the one hold.
  httplib::Client c("127.0.0.1", web_->port());
  HumanSeats other = HumanMatch(stub_.get(), stub_.get(), "connect4");
  // The lobby refuses these at once, within a first beat's wait: that first beat hears it (the
  // page's next beat might go to another gateway instance, which would know nothing of it). On a
  // loaded machine one may miss the wait and answer 200 (not held); its refusal is then kept for
  // its next beat. At least one of the three must be heard on the first beat.
  int on_first = 0;
  auto refusal = [&](const std::string& path, const std::string& token) {
    httplib::Result r = Post(path, token, json::object());
    if (r && r->status != 200) {
      ++on_first;
      return r;
    }
    EXPECT_TRUE(r && json::parse(r->body)["held"] == false) << (r ? r->body : "no answer");
    const absl::Time start = absl::Now();
    while (r && r->status == 200 && absl::Now() - start < absl::Seconds(10)) {
      absl::SleepFor(absl::Milliseconds(100));
      r = Post(path, token, json::object());
    }
    return r;
  };
  httplib::Result foreign = refusal(presence, other.tokens[1]);
  ASSERT_TRUE(foreign);
  EXPECT_TRUE(foreign->status == 401 || foreign->status == 403) << foreign->body;
  httplib::Result made_up = refusal(presence, std::string(32, 'a'));
  ASSERT_TRUE(made_up);
  EXPECT_TRUE(made_up->status == 401 || made_up->status == 403) << made_up->body;
  httplib::Result no_match = refusal("/api/matches/999999/presence", seats.tokens[1]);
  ASSERT_TRUE(no_match);
  EXPECT_EQ(no_match->status, 404) << no_match->body;
  EXPECT_GE(on_first, 1);
  EXPECT_EQ(c.Get("/healthz")->body.substr(c.Get("/healthz")->body.find("holds=")), "holds=1\n");
  httplib::Result foreign_claim = Post(claim, other.tokens[0], json::object());
  ASSERT_TRUE(foreign_claim);
  EXPECT_TRUE(foreign_claim->status == 401 || foreign_claim->status == 403) << foreign_claim->body;

  // Bob closes the page: gone after the grace, claimable after the bound, not before.
  ASSERT_EQ(Post(presence, seats.tokens[1], json{{"here", false}})->status, 200);
  const absl::Time left = absl::Now();
  absl::SleepFor(absl::Milliseconds(1500));
  httplib::Result too_soon = Post(claim, seats.tokens[0], json{{"draw", false}});
  ASSERT_TRUE(too_soon);
  EXPECT_EQ(too_soon->status, 409);
  EXPECT_NE(too_soon->body.find("you can claim after"), std::string::npos) << too_soon->body;
  int status = 0;
  std::string body;
  while (status != 200 && absl::Now() - left < absl::Seconds(kClaimAfterS + 10)) {
    absl::SleepFor(absl::Milliseconds(250));
    httplib::Result r = Post(claim, seats.tokens[0], json{{"draw", false}});
    ASSERT_TRUE(r);
    status = r->status;
    body = r->body;
  }
  ASSERT_EQ(status, 200) << body;
  EXPECT_GE(absl::Now() - left, absl::Seconds(kClaimAfterS));
  const json match = json::parse(body)["match"];
  EXPECT_EQ(match["status"], "finished");
  EXPECT_EQ(match["result"]["winner"], 0);
  EXPECT_EQ(match["result"]["reason"], "abandoned");
}

TEST_F(WebTest, ASeatIsHeldOnlyWhileItsPageBeats) {
  HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "connect4");
  ASSERT_TRUE(Move(stub_.get(), seats.id, 0, "4", seats.tokens[0]).ok());
  ASSERT_TRUE(Move(stub_.get(), seats.id, 1, "4", seats.tokens[1]).ok());
  ASSERT_TRUE(Move(stub_.get(), seats.id, 2, "3", seats.tokens[0]).ok());
  httplib::Client c("127.0.0.1", web_->port());
  auto holds = [&] {
    httplib::Result r = c.Get("/healthz");
    return r ? r->body.substr(r->body.find("holds=")) : std::string("?");
  };
  ASSERT_EQ(
      Post(absl::StrCat("/api/matches/", seats.id, "/presence"), seats.tokens[1], json::object())
          ->status,
      200);
  const absl::Time beat = absl::Now();
  EXPECT_EQ(holds(), "holds=1\n");
  const std::string claim = absl::StrCat("/api/matches/", seats.id, "/claim");
  absl::SleepFor(absl::Milliseconds(1500));
  httplib::Result held = Post(claim, seats.tokens[0], json::object());
  ASSERT_TRUE(held);
  EXPECT_NE(held->body.find("still connected"), std::string::npos) << held->body;
  // No more beats: the hold (3 s here) lapses, then the lobby's grace, and Bob has gone.
  while (holds() != "holds=0\n" && absl::Now() - beat < absl::Seconds(10)) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(holds(), "holds=0\n");
  EXPECT_GE(absl::Now() - beat, absl::Seconds(3));
  std::string body;
  while (absl::Now() - beat < absl::Seconds(10)) {
    httplib::Result r = Post(claim, seats.tokens[0], json::object());
    ASSERT_TRUE(r);
    body = r->body;
    if (body.find("still connected") == std::string::npos) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_NE(body.find("you can claim after"), std::string::npos) << body;
}

TEST_F(WebTest, ASeatHoldersBeatIsNeverRefusedForOthersLoadAndAClaimWaitsForIt) {
  // The claim attack: other pages fill the gateway's holds (here its bound is 1, and Alice's
  // page takes it), so Bob's beats used to answer 429 and Alice won by claim while Bob's page
  // was open. Bob's beats now reach the lobby as calls: his seat is held, and her claim waits.
  auto small = ServerProcess::StartPlain(
      PLY_WEB_BINARY, {"--port=0", "--host=127.0.0.1", absl::StrCat("--lobby=", lobby_->address()),
                       "--presence_holds=1"});
  ASSERT_TRUE(small.ok()) << small.status();
  HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "connect4");
  ASSERT_TRUE(Move(stub_.get(), seats.id, 0, "4", seats.tokens[0]).ok());
  ASSERT_TRUE(Move(stub_.get(), seats.id, 1, "4", seats.tokens[1]).ok());
  ASSERT_TRUE(Move(stub_.get(), seats.id, 2, "3", seats.tokens[0]).ok());
  httplib::Client c("127.0.0.1", (*small)->port());
  const std::string path = absl::StrCat("/api/matches/", seats.id, "/presence");
  auto beat = [&](const std::string& token) {
    httplib::Result r = c.Post(path.c_str(), {{"Authorization", absl::StrCat("Bearer ", token)}},
                               "{}", "application/json");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    return r && r->status == 200 && json::parse(r->body).value("held", false);
  };
  EXPECT_TRUE(beat(seats.tokens[0]));
  EXPECT_TRUE(beat(seats.tokens[0]));  // the same seat again is the same hold
  // Bob: no hold to spare, and still held.
  const absl::Time start = absl::Now();
  const std::string claim = absl::StrCat("/api/matches/", seats.id, "/claim");
  while (absl::Now() - start < absl::Seconds(kClaimAfterS + 2)) {
    EXPECT_TRUE(beat(seats.tokens[1]));
    httplib::Result r = Post(claim, seats.tokens[0], json::object());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 409) << "claimed while Bob's page beat: " << r->body;
    absl::SleepFor(absl::Milliseconds(500));
  }
  // He stops: past the bound, the claim is taken (the rule still works).
  const absl::Time left = absl::Now();
  int status = 0;
  std::string body;
  while (status != 200 && absl::Now() - left < absl::Seconds(kClaimAfterS + 10)) {
    absl::SleepFor(absl::Milliseconds(250));
    httplib::Result r = Post(claim, seats.tokens[0], json::object());
    ASSERT_TRUE(r);
    status = r->status;
    body = r->body;
  }
  EXPECT_EQ(status, 200) << body;
  EXPECT_GE(absl::Now() - left, absl::Seconds(kClaimAfterS - 1));
}

TEST_F(WebTest, TheLobbyCountsEachBrowserNotTheGatewayAsOneClient) {
  // Two people behind one gateway used to share its quotas (or, with it exempt, have none).
  // The gateway sends each browser's address; a lobby that trusts it applies its quotas to
  // each person. Here the gateway is behind a trusted proxy too (X-Forwarded-For from the test).
  lobby_.reset();
  StartLobby({"--trusted_proxies=127.0.0.1", "--client_waiting_matches=1"});
  auto web = ServerProcess::StartPlain(
      PLY_WEB_BINARY, {"--port=0", "--host=127.0.0.1", absl::StrCat("--lobby=", lobby_->address()),
                       "--trust_forwarded_for"});
  ASSERT_TRUE(web.ok()) << web.status();
  httplib::Client c("127.0.0.1", (*web)->port());
  auto open = [&](const std::string& browser) {
    const json request = {{"game", "tictactoe"},
                          {"name", "someone"},
                          {"seats", json::array({json{{"bot", false}}, json{{"bot", false}}})},
                          {"take_seat", 0}};
    httplib::Result r =
        c.Post("/api/matches", {{"X-Forwarded-For", browser}}, request.dump(), "application/json");
    return r ? r->status : 0;
  };
  EXPECT_EQ(open("198.51.100.7"), 201);
  EXPECT_EQ(open("198.51.100.7"), 429) << "the first browser's own quota";
  EXPECT_EQ(open("198.51.100.8"), 201) << "another browser is not held back by the first";
  EXPECT_EQ(open("2001:db8:5::1"), 201);
}

TEST_F(WebTest, PlayersLogInPairAndReadRatingsThroughTheApi) {
  httplib::Client c("127.0.0.1", web_->port());
  c.set_read_timeout(20, 0);
  auto post = [&](const std::string& path, const std::string& auth, const json& body) {
    httplib::Headers headers;
    if (!auth.empty()) headers.emplace("Authorization", auth);
    return c.Post(path.c_str(), headers, body.dump(), "application/json");
  };
  // Registering a name answers its key once; the key then logs in as that name, and only it.
  httplib::Result made = post("/api/login", "", {{"name", "carol"}});
  ASSERT_TRUE(made && made->status == 200) << (made ? made->body : "no answer");
  const json login = json::parse(made->body);
  const std::string key = login.value("key", "");
  ASSERT_GE(key.size(), 16u);
  EXPECT_EQ(login["player"]["name"], "carol");
  httplib::Result again = post("/api/login", absl::StrCat("Player ", key), {{"name", "carol"}});
  ASSERT_TRUE(again && again->status == 200) << (again ? again->body : "no answer");
  EXPECT_FALSE(json::parse(again->body).contains("key")) << "a key is shown once";
  httplib::Result taken = post("/api/login", "", {{"name", "Carol"}});
  EXPECT_TRUE(taken && taken->status == 409) << (taken ? taken->body : "no answer");
  httplib::Result foreign = post("/api/login", absl::StrCat("Player ", key), {{"name", "dave"}});
  EXPECT_TRUE(foreign && foreign->status == 403) << (foreign ? foreign->body : "no answer");
  httplib::Result garbage = post("/api/login", "Player <script>", {{"name", "carol"}});
  EXPECT_TRUE(garbage && garbage->status == 401) << (garbage ? garbage->body : "no answer");
  httplib::Result unknown =
      post("/api/login", "Player AAAAAAAAAAAAAAAAAAAAAAAA", json{{"name", ""}});
  EXPECT_TRUE(unknown && unknown->status == 401) << (unknown ? unknown->body : "no answer");
  // Pairing is for players: a guest is told to log in, and a bad request says what is wrong.
  httplib::Result guest = post("/api/pair", "", {{"game", "tictactoe"}});
  ASSERT_TRUE(guest);
  EXPECT_EQ(guest->status, 401);
  EXPECT_NE(guest->body.find("log in"), std::string::npos) << guest->body;
  httplib::Result bad = post("/api/pair", absl::StrCat("Player ", key), {{"game", "chess"}});
  EXPECT_TRUE(bad && bad->status == 400) << (bad ? bad->body : "no answer");
  // A match created with the key is the player's: the seat carries the name, not a guest's.
  httplib::Result created =
      post("/api/matches", absl::StrCat("Player ", key),
           {{"game", "tictactoe"},
            {"name", "someone else"},
            {"seats", json::array({json{{"bot", false}}, json{{"bot", true}, {"level", "easy"}}})},
            {"take_seat", 0}});
  ASSERT_TRUE(created && created->status == 201) << (created ? created->body : "no answer");
  const json seat = json::parse(created->body)["match"]["seats"][0];
  EXPECT_EQ(seat["player"], "carol");
  EXPECT_EQ(seat["guest"], false);
  // Profiles, a player's matches and the leaderboard, as the lobby has them.
  httplib::Result profile = c.Get("/api/players/carol");
  ASSERT_TRUE(profile && profile->status == 200) << (profile ? profile->body : "no answer");
  EXPECT_EQ(json::parse(profile->body)["name"], "carol");
  httplib::Result history = c.Get("/api/players/carol/matches?limit=5");
  ASSERT_TRUE(history && history->status == 200) << (history ? history->body : "no answer");
  EXPECT_EQ(json::parse(history->body)["matches"].size(), 1u);
  httplib::Result nobody = c.Get("/api/players/nobody_here");
  EXPECT_TRUE(nobody && nobody->status == 404) << (nobody ? nobody->body : "no answer");
  httplib::Result top = c.Get("/api/leaderboard?game=connect4&limit=5");
  ASSERT_TRUE(top && top->status == 200) << (top ? top->body : "no answer");
  v1::LeaderboardRequest request;
  request.set_game("connect4");
  request.set_limit(5);
  v1::LeaderboardResponse expected;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->Leaderboard(&context, request, &expected).ok());
  const json entries = json::parse(top->body)["entries"];
  ASSERT_EQ(entries.size(), static_cast<size_t>(expected.entries_size()));
  for (int i = 0; i < expected.entries_size(); ++i) {
    EXPECT_EQ(entries[i]["name"], expected.entries(i).name());
    EXPECT_EQ(entries[i]["rating"], expected.entries(i).rating());
  }
  httplib::Result no_game = c.Get("/api/leaderboard?game=chess");
  EXPECT_TRUE(no_game && no_game->status == 400) << (no_game ? no_game->body : "no answer");
}

TEST_F(WebTest, APairingPageThatLeavesTakesItsPlayerOutOfTheQueue) {
  httplib::Client c("127.0.0.1", web_->port());
  c.set_read_timeout(20, 0);
  httplib::Result made = c.Post("/api/login", json{{"name", "erin"}}.dump(), "application/json");
  ASSERT_TRUE(made && made->status == 200) << (made ? made->body : "no answer");
  const std::string key = json::parse(made->body)["key"];
  // The page reads the stream until it has seen the queue, then goes away.
  std::string text;
  httplib::Request pair_call;
  pair_call.method = "POST";
  pair_call.path = "/api/pair";
  pair_call.set_header("Authorization", absl::StrCat("Player ", key));
  pair_call.set_header("Content-Type", "application/json");
  pair_call.body = json{{"game", "connect4"}}.dump();
  pair_call.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    text.append(data, n);
    return text.find("event: queued") == std::string::npos;
  };
  httplib::Response pair_answer;
  httplib::Error pair_error = httplib::Error::Success;
  c.send(pair_call, pair_answer, pair_error);
  EXPECT_NE(text.find("event: queued"), std::string::npos) << text;
  // Someone else asking for the same game a second later is not paired with a page that left
  // (the gateway finds the closed page within two of its 250 ms beats).
  absl::SleepFor(absl::Seconds(1));
  v1::LoginRequest login;
  login.set_name("frank");
  v1::LoginResponse frank;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Login(&context, login, &frank).ok());
  }
  grpc::ClientContext context;
  context.AddMetadata("x-ply-player", frank.player_key());
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
  v1::PairRequest pair;
  pair.mutable_spec()->set_name("connect4");
  auto reader = stub_->Pair(&context, pair);
  v1::PairEvent e;
  bool paired = false;
  while (reader->Read(&e)) paired = paired || e.has_paired();
  EXPECT_FALSE(paired) << "paired with a player whose page had left the queue";
}

TEST_F(WebTest, BrowserPlayersRegisterPairPlayARatedGameAndSeeTheirRatings) {
  SKIP_WITHOUT_BROWSER();
  const json report = Scenario("players", {"tictactoe", "w1"});
  ASSERT_TRUE(report.contains("id")) << report.dump();
  const int64_t id = report["id"];
  EXPECT_EQ(report["ids"][0], report["ids"][1]) << "both pages in the same match";
  EXPECT_EQ(report["corner"], "alice_w1");
  EXPECT_NE(report.value("waiting", "").find("Looking for an opponent"), std::string::npos);
  const v1::Match m = Get(id);
  ASSERT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_RESIGNATION);
  const int loser = report["loser"];
  EXPECT_EQ(m.result().winner(), 1 - loser);
  // Both pages show both seats' rating changes, as the lobby rated them.
  for (int page = 0; page < 2; ++page) {
    ASSERT_EQ(report["changes"][page].size(), 2u) << report.dump();
    for (int seat = 0; seat < 2; ++seat) {
      const v1::Seat& s = m.seats(seat);
      ASSERT_GT(s.rating_after(), 0) << "a rated game";
      const int delta = s.rating_after() - s.rating();
      EXPECT_EQ(report["changes"][page][seat],
                absl::StrCat("→ ", s.rating_after(), " (", delta >= 0 ? "+" : "", delta, ")"));
    }
  }
  EXPECT_GT(m.seats(1 - loser).rating_after(), m.seats(1 - loser).rating());
  // The winner's page: the game's rating (provisional after one game) and the game won.
  const std::string row = report.value("ratingRow", "");
  EXPECT_NE(row.find(absl::StrCat(m.seats(1 - loser).rating_after(), "?")), std::string::npos)
      << row;
  ASSERT_GE(report["history"].size(), 1u);
  EXPECT_NE(report["history"][0].get<std::string>().find("won"), std::string::npos)
      << report["history"][0];
  // The leaderboard as the lobby has it (settled ratings only: the bot levels here).
  v1::LeaderboardRequest request;
  request.set_game("tictactoe");
  request.set_limit(50);
  v1::LeaderboardResponse expected;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->Leaderboard(&context, request, &expected).ok());
  EXPECT_EQ(report["board"].size(), static_cast<size_t>(expected.entries_size()));
  // Logged out, the page is a guest's; the key brings the name back.
  EXPECT_EQ(report["afterLogout"], "Log in");
  EXPECT_EQ(report["back"], report["names"][loser]);
}

TEST_F(WebTest, ARematchOfferIsWithdrawnAndDeclinedThroughTheApi) {
  HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "connect4");
  ASSERT_TRUE(Move(stub_.get(), seats.id, 0, "4", seats.tokens[0]).ok());
  ResignSeat(seats.id, seats.tokens[1]);
  const std::string rematch = absl::StrCat("/api/matches/", seats.id, "/rematch");
  auto offer_of = [](const httplib::Result& r) {
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    return r ? json::parse(r->body)["match"].value("rematch_offer", -2) : -2;
  };
  // Alice offers, then withdraws; Bob offers, and Alice declines.
  EXPECT_EQ(offer_of(Post(rematch, seats.tokens[0], json{{"decline", false}})), 0);
  EXPECT_EQ(offer_of(Post(rematch, seats.tokens[0], json{{"decline", true}})), -1);
  EXPECT_EQ(OfferRematch(seats.id, seats.tokens[1]).match().rematch_offer(), 1);
  httplib::Client c("127.0.0.1", web_->port());
  EXPECT_EQ(json::parse(c.Get(absl::StrCat("/api/matches/", seats.id).c_str())->body)
                .value("rematch_offer", -2),
            1);
  httplib::Result declined = Post(rematch, seats.tokens[0], json{{"decline", true}});
  EXPECT_EQ(offer_of(declined), -1);
  EXPECT_FALSE(json::parse(declined->body).contains("rematch"));
  EXPECT_EQ(Get(seats.id).rematch_id(), 0);
}

TEST_F(WebTest, ARematchOfABotMatchIsMadeAtOnceWithTheSidesSwapped) {
  httplib::Result created = Post(
      "/api/matches", "",
      {{"game", "connect4"},
       {"name", "carol"},
       {"seats", json::array({json{{"bot", false}}, json{{"bot", true}, {"level", "beginner"}}})},
       {"take_seat", 0}});
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 201) << created->body;
  const json c = json::parse(created->body);
  const int64_t id = c["match"]["id"];
  const std::string token = c["token"];
  const std::string rematch = absl::StrCat("/api/matches/", id, "/rematch");
  httplib::Result not_over = Post(rematch, token, json::object());
  ASSERT_TRUE(not_over);
  EXPECT_EQ(not_over->status, 409) << not_over->body;
  ASSERT_EQ(Post(absl::StrCat("/api/matches/", id, "/resign"), token, json::object())->status, 200);

  httplib::Result made = Post(rematch, token, json::object());
  ASSERT_TRUE(made);
  ASSERT_EQ(made->status, 200) << made->body;
  const json r = json::parse(made->body);
  ASSERT_TRUE(r.contains("rematch")) << made->body;
  const int64_t next = r["rematch"]["id"];
  EXPECT_NE(next, id);
  EXPECT_EQ(r["rematch"]["seat"], 1);
  EXPECT_EQ(r["match"]["rematch_id"], next);
  const v1::Match m = Get(next);
  EXPECT_EQ(m.seats(0).kind(), v1::SEAT_KIND_BOT);
  EXPECT_EQ(m.seats(1).kind(), v1::SEAT_KIND_HUMAN);
  EXPECT_EQ(m.seats(1).display_name(), "carol");
  // The new seat's token plays in the new match, and asking again gives the same match.
  const std::string next_token = r["rematch"]["token"];
  EXPECT_EQ(json::parse(Post(rematch, token, json::object())->body)["rematch"]["id"], next);
  // The new match's token is not the old one's: it cannot act in the old match.
  httplib::Result foreign = Post(rematch, next_token, json{{"decline", true}});
  ASSERT_TRUE(foreign);
  EXPECT_TRUE(foreign->status == 401 || foreign->status == 403) << foreign->body;
}

TEST_F(WebTest, BrowserShowsWhoLeftAndClaimsTheWinWhenTheLobbyAllowsIt) {
  SKIP_WITHOUT_BROWSER();
  // Bob moved (over gRPC) and went; Alice plays her move on the page, then waits him out.
  HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "connect4");
  ASSERT_TRUE(Move(stub_.get(), seats.id, 0, "4", seats.tokens[0]).ok());
  ASSERT_TRUE(Move(stub_.get(), seats.id, 1, "4", seats.tokens[1]).ok());
  const json report = Scenario("claim", {std::to_string(seats.id), seats.tokens[0], "3"});
  EXPECT_TRUE(absl::StartsWith(report.value("waiting", ""),
                               "bob left the game - you can claim the win in 0:0"))
      << report.dump();
  EXPECT_EQ(report["marked"], 1);  // Bob's seat says he left
  EXPECT_NE(report.value("refused", "").find("you can claim after"), std::string::npos)
      << report.dump();
  EXPECT_EQ(report.value("ready", ""), "bob left the game - you can claim the win now");
  EXPECT_NE(report.value("status", "").find("wins by claim"), std::string::npos) << report.dump();
  EXPECT_EQ(report.value("presenceAfter", "x"), "");
  const v1::Match m = Get(seats.id);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().winner(), 0);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_ABANDONED);
}

// Two browsers: the opponent closes the page on his move, the claim wins when its time comes,
// and the rematch offered afterwards is accepted when he opens the match again.
TEST_F(WebTest, BrowserClaimsAgainstAClosedPageAndBothBrowsersGoIntoTheRematch) {
  SKIP_WITHOUT_BROWSER();
  const json report = Scenario("leave-claim-rematch");
  const int64_t id = report.value("id", int64_t{0});
  ASSERT_GT(id, 0) << report.dump();
  EXPECT_TRUE(absl::StartsWith(report.value("waiting", ""),
                               "bob left the game - you can claim the win in 0:0"))
      << report.dump();
  EXPECT_NE(report.value("claimed", "").find("wins by claim"), std::string::npos) << report.dump();
  EXPECT_EQ(report.value("offered", ""), "Rematch offered; waiting for an answer.");
  EXPECT_EQ(report.value("offer", ""), "alice offers a rematch.");
  const v1::Match first = Get(id);
  EXPECT_EQ(first.result().winner(), 0);
  EXPECT_EQ(first.result().reason(), v1::END_REASON_ABANDONED);
  // Both pages in the one new match, on the other sides.
  ASSERT_GT(first.rematch_id(), 0);
  EXPECT_EQ(report["a"]["id"], first.rematch_id());
  EXPECT_EQ(report["b"]["id"], first.rematch_id());
  EXPECT_EQ(report["a"]["seat"], 2);
  EXPECT_EQ(report["b"]["seat"], 1);
  const v1::Match second = Get(first.rematch_id());
  EXPECT_EQ(second.status(), v1::MATCH_STATUS_ACTIVE);
  EXPECT_EQ(second.seats(0).display_name(), "bob");
  EXPECT_EQ(second.seats(1).display_name(), "alice");
}

// A spectator follows a bot match with the live analysis: the graph grows with the moves (the
// lobby judging only the new positions) and ends as the stored analysis of the whole match.
TEST_F(WebTest, BrowserFollowsABotMatchWithTheLiveWinChanceGraph) {
  SKIP_WITHOUT_BROWSER();
  const int64_t id = BotMatch("connect4", 900, {"easy", "easy"});
  const json report = Scenario("live-graph", {std::to_string(id)});
  ASSERT_TRUE(report.contains("final")) << report.dump();
  EXPECT_EQ(report["early"]["pressed"], "true");
  EXPECT_TRUE(absl::StartsWith(report["early"].value("heading", ""), "Analysis so far ("))
      << report.dump();
  EXPECT_GT(report["later"]["points"], report["early"]["points"]) << report.dump();
  const v1::Match m = WaitFinished(id);
  ASSERT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(report["final"]["moves"], m.moves_size());
  EXPECT_EQ(report["final"]["points"], m.moves_size() + 1);
  EXPECT_EQ(report["final"]["accuracy"], 2);
  EXPECT_EQ(report["final"].value("text", "").find("null"), std::string::npos) << report.dump();
  // The last request stored the analysis of the whole match.
  const Analysed stored = ply::testing::Analyze(stub_.get(), id, /*stored_only=*/true);
  ASSERT_TRUE(stored.status.ok()) << stored.status.error_message();
  EXPECT_FALSE(stored.analysis.partial());
  EXPECT_EQ(stored.analysis.moves_size(), m.moves_size());
}

TEST_F(WebTest, BrowserRematchesABotAndPlaysTheOtherSide) {
  SKIP_WITHOUT_BROWSER();
  const json report = Scenario("rematch-bot", {"beginner"});
  const int64_t first = report.value("first", int64_t{0});
  const int64_t second = report.value("second", int64_t{0});
  ASSERT_GT(first, 0) << report.dump();
  EXPECT_EQ(Get(first).rematch_id(), second);
  const v1::Match m = Get(second);
  EXPECT_EQ(m.seats(0).kind(), v1::SEAT_KIND_BOT);
  EXPECT_EQ(m.seats(1).kind(), v1::SEAT_KIND_HUMAN);
  EXPECT_EQ(report["stored"], true);
}

TEST_F(WebTest, BrowserAcceptsTheOpponentsRematchOffer) {
  SKIP_WITHOUT_BROWSER();
  HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "connect4");
  ASSERT_TRUE(Move(stub_.get(), seats.id, 0, "4", seats.tokens[0]).ok());
  ResignSeat(seats.id, seats.tokens[1]);
  // Bob offers; Alice's page shows it and accepts.
  EXPECT_EQ(OfferRematch(seats.id, seats.tokens[1]).rematch_id(), 0);
  const json report = Scenario("rematch-accept", {std::to_string(seats.id), seats.tokens[0]});
  EXPECT_EQ(report.value("offer", ""), "bob offers a rematch.");
  EXPECT_EQ(report["decline"], 1);
  const int64_t second = report.value("second", int64_t{0});
  // Bob asking again gets the same new match, on the other side.
  const v1::OfferRematchResponse bob = OfferRematch(seats.id, seats.tokens[1]);
  EXPECT_EQ(bob.rematch_id(), second);
  EXPECT_EQ(bob.seat(), 0);
  EXPECT_EQ(Get(second).seats(1).display_name(), "alice");
}

TEST_F(WebTest, BrowserOffersARematchAndFollowsItWhenAccepted) {
  SKIP_WITHOUT_BROWSER();
  HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "connect4");
  ASSERT_TRUE(Move(stub_.get(), seats.id, 0, "4", seats.tokens[0]).ok());
  ResignSeat(seats.id, seats.tokens[1]);
  json report;
  std::thread page([&] {
    report = Scenario("rematch-offer", {std::to_string(seats.id), seats.tokens[0]});
  });
  // Once Alice's page has offered, Bob accepts.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (Get(seats.id).rematch_offer() != 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  const v1::OfferRematchResponse bob = OfferRematch(seats.id, seats.tokens[1]);
  page.join();
  EXPECT_GT(bob.rematch_id(), 0);
  EXPECT_EQ(report.value("waiting", ""), "Rematch offered; waiting for an answer.");
  EXPECT_EQ(report.value("second", int64_t{0}), bob.rematch_id());
  EXPECT_EQ(Get(bob.rematch_id()).seats(1).display_name(), "alice");
}

TEST_F(WebTest, BrowserReplayShowsTheAnalysisMarks) {
  SKIP_WITHOUT_BROWSER();
  const int64_t id = AnalysedBlunderMatch();
  const json report = Scenario("analysis", {std::to_string(id), "7"});
  // Marks as the lobby stored them: the blunder at ply 7 among them.
  httplib::Client c("127.0.0.1", web_->port());
  const json replay =
      json::parse(c.Get(absl::StrCat("/api/matches/", id, "/replay").c_str())->body);
  ASSERT_EQ(report["marks"].size(), kBlunderGame.size()) << report.dump();
  for (size_t i = 0; i < kBlunderGame.size(); ++i) {
    EXPECT_EQ(report["marks"][i], replay["analysis"]["moves"][i]["mark"]) << i;
  }
  EXPECT_EQ(report["marks"][6], "??");
  EXPECT_NE(report.value("status", "").find("?? "), std::string::npos) << report.dump();
  EXPECT_NE(report.value("status", "").find("(proven), best was 1"), std::string::npos)
      << report.dump();
}

TEST_F(WebTest, BrowserShowsTheWinChanceGraphAndTheBestMoveOfAnAnalysedMatch) {
  SKIP_WITHOUT_BROWSER();
  const int64_t id = AnalysedBlunderMatch();
  const json report = Scenario("graph", {std::to_string(id), "7"});
  httplib::Client c("127.0.0.1", web_->port());
  const json analysis =
      json::parse(c.Get(absl::StrCat("/api/matches/", id, "/replay").c_str())->body)["analysis"];
  const json& moves = analysis["moves"];
  // One point per position (the start and after each move); the marked and proven ones as the
  // lobby judged them; marks inline in the move list; no second analysis offered.
  EXPECT_EQ(report["points"], kBlunderGame.size() + 1) << report.dump();
  std::vector<int> marked;
  int proven = moves[0]["before_exact"].get<bool>() ? 1 : 0;
  for (const json& m : moves) {
    if (!m["mark"].get<std::string>().empty()) marked.push_back(m["ply"]);
    proven += m["after_exact"].get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(report["marked"].get<std::vector<int>>(), marked);
  EXPECT_EQ(report["proven"], proven);
  for (size_t i = 0; i < kBlunderGame.size(); ++i) EXPECT_EQ(report["inline"][i], moves[i]["mark"]);
  EXPECT_EQ(report["accuracy"].size(), 2u);
  EXPECT_EQ(report["analyseButton"], 0);
  // Clicked just before the blunder: the best move (block column 1) named and drawn on its cell.
  EXPECT_EQ(report["current"], "6");
  EXPECT_NE(report.value("best", "").find("Best here for Red: 1"), std::string::npos)
      << report.dump();
  EXPECT_EQ(report["bestCells"], json::array({"1"}));
  EXPECT_NE(report.value("status", "").find("?? "), std::string::npos) << report.dump();
}

TEST_F(WebTest, BrowserAnalysesAFinishedMatchShowingTheLobbysProgress) {
  SKIP_WITHOUT_BROWSER();
  const int64_t id = AnalysedBlunderMatch(/*analysed=*/false);
  const json report = Scenario("analyse", {std::to_string(id)});
  EXPECT_EQ(report["before"], 0) << report.dump();
  // The page's marks are the ones the lobby stored for the match.
  httplib::Client c("127.0.0.1", web_->port());
  const json replay =
      json::parse(c.Get(absl::StrCat("/api/matches/", id, "/replay").c_str())->body);
  ASSERT_TRUE(replay.contains("analysis")) << replay.dump();
  ASSERT_EQ(report["marks"].size(), kBlunderGame.size()) << report.dump();
  for (size_t i = 0; i < kBlunderGame.size(); ++i) {
    EXPECT_EQ(report["marks"][i], replay["analysis"]["moves"][i]["mark"]) << i;
  }
  EXPECT_EQ(report["marks"][6], "??");
  // Each player's accuracy, counted in words, and the lobby's progress on the way.
  const std::string accuracy = report["accuracy"].dump();
  EXPECT_NE(accuracy.find("Red (alice): accuracy"), std::string::npos) << accuracy;
  EXPECT_NE(accuracy.find("1 blunder (?\?)"), std::string::npos) << accuracy;
  bool progressed = false;
  for (const json& p : report["progress"]) {
    progressed = progressed || absl::StrContains(p.get<std::string>(), "positions");
  }
  EXPECT_TRUE(progressed) << report["progress"].dump();
  // The endpoint refuses what is not a finished match with the lobby's reason.
  httplib::Result missing = c.Get("/api/matches/999999/analysis");
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->body.find("failed"), std::string::npos) << missing->body;
}

TEST_F(WebTest, BrowserWatchesABotMatchToItsEndWithTheLobbysMoves) {
  SKIP_WITHOUT_BROWSER();
  const int64_t id = BotMatch("reversi", 100);
  const json report = Scenario("watch", {std::to_string(id)});
  const v1::Match stored = Get(id);
  std::vector<std::string> moves;
  for (const v1::MoveRecord& m : stored.moves()) moves.push_back(m.move());
  EXPECT_EQ(report["moves"].get<std::vector<std::string>>(), moves);
  EXPECT_GT(report["botInfo"].get<int>(), 0);
  // Every bot's score from one stated side, the first seat's, as the terminal shows it.
  EXPECT_NE(report["legend"].get<std::string>().find("score from Black's side"), std::string::npos)
      << report["legend"];
  const std::vector<std::string> bot_texts = report["botTexts"].get<std::vector<std::string>>();
  ASSERT_EQ(bot_texts.size(), moves.size());
  int checked = 0;
  for (int i = 0; i < stored.moves_size(); ++i) {
    const v1::MoveRecord& m = stored.moves(i);
    int score = 0;
    if (!m.has_bot() || m.bot().nodes() == 0 || !absl::SimpleAtoi(m.bot().score_text(), &score)) {
      continue;
    }
    if (m.seat() == 1) score = -score;
    const std::string shown = score > 0 ? absl::StrCat("+", score) : absl::StrCat(score);
    EXPECT_NE(bot_texts[i].find(absl::StrCat(" · ", shown, " · ")), std::string::npos)
        << "move " << i + 1 << " by seat " << m.seat() + 1 << ": " << bot_texts[i]
        << " for the mover's " << m.bot().score_text();
    ++checked;
  }
  EXPECT_GT(checked, 0);
  EXPECT_GT(std::filesystem::file_size(report["screenshot"].get<std::string>()), 1000u);
  // The replay steps from the empty board to the end; the page fits a phone's width.
  const std::string result = absl::StrCat(" moves (", stored.result().text(), ")");
  EXPECT_EQ(report["replay"]["atStart"],
            absl::StrCat("Replay: position after 0 of ", moves.size(), result));
  EXPECT_EQ(report["replay"]["afterOne"],
            absl::StrCat("Replay: position after 1 of ", moves.size(), result));
  EXPECT_EQ(report["replay"]["atEnd"],
            absl::StrCat("Replay: position after ", moves.size(), " of ", moves.size(), result));
  EXPECT_EQ(report["replay"]["startBoard"], 4);  // Reversi's four first discs
  EXPECT_LE(report["overflow"].get<int>(), 0);
  // From a move's commit in the lobby to the page showing it, same machine, same clock.
  std::vector<double> delays;
  for (const json& t : report["trace"]) {
    delays.push_back(t["seen_ms"].get<double>() - t["commit_ms"].get<double>());
  }
  ASSERT_FALSE(delays.empty());
  std::sort(delays.begin(), delays.end());
  const double p50 = delays[delays.size() / 2];
  const double p99 = delays[std::min(delays.size() - 1, delays.size() * 99 / 100)];
  std::printf("commit to browser: %zu moves, p50 %.1f ms, p99 %.1f ms\n", delays.size(), p50, p99);
  RecordProperty("commit_to_browser_p50_ms", std::to_string(p50));
  RecordProperty("commit_to_browser_p99_ms", std::to_string(p99));
  EXPECT_LT(p99, 1000);
}

TEST_F(WebTest, BrowserKeepsEveryMoveAcrossAGatewayRestart) {
  SKIP_WITHOUT_BROWSER();
  const int64_t id = BotMatch("reversi", 100);
  json report;
  std::thread page([&] { report = Scenario("watch", {std::to_string(id)}); });
  // Mid-match, ply-web dies and a new one takes its port: the page's EventSource reconnects
  // with the last move it has as Last-Event-ID. That is once the page follows the match (ply-web
  // has its feed) and a few more moves have come.
  const absl::Time deadline = absl::Now() + absl::Seconds(90);
  httplib::Client health("127.0.0.1", web_->port());
  bool following = false;
  while (!following && absl::Now() < deadline) {
    httplib::Result r = health.Get("/healthz");
    following = r && r->body.find("feeds=1") != std::string::npos;
    absl::SleepFor(absl::Milliseconds(50));
  }
  const int seen = Get(id).moves_size();
  while (following && Get(id).moves_size() < seen + 5 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  if (!following || Get(id).status() != v1::MATCH_STATUS_ACTIVE) {
    page.join();
    FAIL() << "the page never followed the match, or it ended before the restart";
  }
  const int port = web_->port();
  web_.reset();
  absl::SleepFor(absl::Milliseconds(500));
  auto web = ServerProcess::StartPlain(
      PLY_WEB_BINARY, {absl::StrCat("--port=", port), "--host=127.0.0.1",
                       absl::StrCat("--lobby=", lobby_->address()), "--client_rps=1000",
                       "--client_burst=1000", "--client_streams=0", "--client_connections=0"});
  ASSERT_TRUE(web.ok()) << web.status();
  web_ = *std::move(web);
  page.join();
  const v1::Match stored = Get(id);
  std::vector<std::string> moves;
  for (const v1::MoveRecord& m : stored.moves()) moves.push_back(m.move());
  ASSERT_TRUE(report.contains("moves")) << report.dump();
  EXPECT_EQ(report["moves"].get<std::vector<std::string>>(), moves);
  EXPECT_EQ(report["snapshots"], 1);  // resumed, not started over
}

TEST_F(WebTest, BrowserFollowsByAskingWhenTheGatewayHasNoStreamToSpare) {
  SKIP_WITHOUT_BROWSER();
  // A gateway with room for eight event streams (the fewest: --threads is at least 40, and 32
  // threads stay for other requests), which others hold.
  web_.reset();
  auto web = ServerProcess::StartPlain(
      PLY_WEB_BINARY, {"--port=0", "--host=127.0.0.1", absl::StrCat("--lobby=", lobby_->address()),
                       "--threads=40", "--client_rps=1000", "--client_burst=1000"});
  ASSERT_TRUE(web.ok()) << web.status();
  web_ = *std::move(web);
  base_ = absl::StrCat("http://127.0.0.1:", web_->port());
  const int64_t id = BotMatch("reversi", 120);
  std::vector<std::thread> holders;
  for (int i = 0; i < 8; ++i) {
    holders.emplace_back([&] {
      Stream(id, {}, "",
             [](const std::string& t) { return t.find("event: end") != std::string::npos; });
    });
  }
  absl::SleepFor(absl::Milliseconds(500));
  const json report = Scenario("watch", {std::to_string(id)});
  for (std::thread& t : holders) t.join();
  const v1::Match stored = Get(id);
  std::vector<std::string> moves;
  for (const v1::MoveRecord& m : stored.moves()) moves.push_back(m.move());
  ASSERT_TRUE(report.contains("moves")) << report.dump();
  EXPECT_EQ(report["moves"].get<std::vector<std::string>>(), moves);
  EXPECT_EQ(report["snapshots"], 0);  // no event stream at all
  EXPECT_EQ(report["connection"],
            "Live updates are not available; the page asks every two seconds.");
}

TEST_F(WebTest, BrowserPagesPlayConnectFourAgainstEachOtherToAWin) {
  SKIP_WITHOUT_BROWSER();
  const json report = Scenario("two-players");
  // Red's clock ran while Red was to move.
  EXPECT_NE(report["clockBefore"], report["clockAfter"]);
  EXPECT_EQ(report["a"], "Game over: Red wins: four in a row");
  EXPECT_EQ(report["b"], "Game over: Red wins: four in a row");
  EXPECT_EQ(report["tokenShownToB"], false);
  // The winning four ringed on both pages: column 1's four red pieces, no other cell.
  for (int page = 0; page < 2; ++page) {
    EXPECT_EQ(report["wins"][page], json::array({"1", "1", "1", "1"})) << report.dump();
  }
}

TEST_F(WebTest, BrowserPlaysABotInEveryGameByClicking) {
  SKIP_WITHOUT_BROWSER();
  const json specs = json::parse(R"([
    {"label": "connect4", "game": "connect4", "level": "beginner"},
    {"label": "connect4-cylinder", "game": "connect4", "level": "beginner",
     "options": {"cylinder": "true", "width": "8", "height": "5"}},
    {"label": "tictactoe", "game": "tictactoe", "level": "beginner"},
    {"label": "tictactwo", "game": "tictactwo", "level": "beginner", "moves": 5},
    {"label": "reversi", "game": "reversi", "level": "beginner",
     "options": {"width": "6", "height": "6", "walls": "a1+f6"}},
    {"label": "reversi-10x8", "game": "reversi", "level": "beginner",
     "options": {"width": "10", "height": "8"}},
    {"label": "gomoku", "game": "gomoku", "level": "beginner"},
    {"label": "morris", "game": "morris", "level": "beginner"},
    {"label": "draughts", "game": "draughts", "level": "beginner"}])");
  const json report = Scenario("bots", {specs.dump()});
  ASSERT_EQ(report["results"].size(), specs.size()) << report.dump();
  for (const json& r : report["results"]) {
    SCOPED_TRACE(r["label"].get<std::string>());
    EXPECT_GE(r["played"].size(), 2u);
    // Each clicked move is stored as the lobby's own record of the match.
    const v1::Match stored = Get(r["id"].get<int64_t>());
    for (size_t i = 0; i < r["played"].size(); ++i) {
      ASSERT_GT(stored.moves_size(), static_cast<int>(2 * i));
      EXPECT_EQ(stored.moves(2 * i).move(), r["played"][i]);
    }
    EXPECT_GT(std::filesystem::file_size(r["screenshot"].get<std::string>()), 1000u);
    // Reversi's legal moves are dots on the board before anything is picked; other games'
    // boards are left clean.
    std::vector<std::string> dots = r.value("dots", std::vector<std::string>());
    std::sort(dots.begin(), dots.end());
    if (r["label"].get<std::string>().rfind("reversi", 0) == 0) {
      std::vector<std::string> legal = r["legal"];
      std::sort(legal.begin(), legal.end());
      EXPECT_EQ(dots, legal);
      EXPECT_FALSE(dots.empty());
    } else {
      EXPECT_TRUE(dots.empty()) << r.dump();
    }
  }
}

// Plays random legal moves of `game` from the start until the side to move has a legal move that
// `wanted` picks; the moves before it and that move.
std::pair<std::vector<std::string>, std::string> FindPosition(
    const std::string& game, const std::function<bool(const std::string&)>& wanted) {
  std::mt19937 random(7);
  for (int attempt = 0; attempt < 200; ++attempt) {
    auto g = *CreateGame(game, {});
    std::vector<std::string> played;
    for (int ply = 0; ply < 120 && !g->Status().over; ++ply) {
      std::vector<std::string> legal = g->LegalMoves();
      for (const std::string& m : legal) {
        if (wanted(m)) return {played, m};
      }
      const std::string m = legal[random() % legal.size()];
      EXPECT_TRUE(g->Play(m).ok());
      played.push_back(m);
    }
  }
  return {{}, ""};
}

TEST_F(WebTest, BrowserClicksAMorrisCaptureAndADraughtsMultiJump) {
  SKIP_WITHOUT_BROWSER();
  const std::vector<std::pair<std::string, std::function<bool(const std::string&)>>> cases = {
      {"morris", [](const std::string& m) { return m.find('x') != std::string::npos; }},
      {"draughts", [](const std::string& m) { return std::count(m.begin(), m.end(), 'x') >= 2; }},
  };
  for (const auto& [game, wanted] : cases) {
    SCOPED_TRACE(game);
    const auto [before, move] = FindPosition(game, wanted);
    ASSERT_FALSE(move.empty());
    v1::CreateMatchResponse created;
    ASSERT_TRUE(Create(stub_.get(), game, {SEAT_KIND_HUMAN, SEAT_KIND_HUMAN}, {}, &created,
                       TakingSeat(0, "one"))
                    .ok());
    const int64_t id = created.match().id();
    v1::JoinMatchResponse joined;
    ASSERT_TRUE(Join(stub_.get(), id, 1, "two", &joined).ok());
    const std::string tokens[2] = {created.seat_token(), joined.seat_token()};
    for (size_t i = 0; i < before.size(); ++i) {
      const int seat = Get(id).to_move();
      ASSERT_TRUE(Move(stub_.get(), id, static_cast<int>(i), before[i], tokens[seat]).ok());
    }
    const int seat = Get(id).to_move();
    const json report = Scenario(
        "click-move", {std::to_string(id), std::to_string(seat), tokens[seat], move, game});
    EXPECT_EQ(report["last"], move);
    const v1::Match stored = Get(id);
    // Morris: the mill the capture closed is ringed, three points through the moved piece.
    if (game == "morris") {
      const std::string to = move.substr(0, move.find('x'));
      const std::string landed =
          to.substr(to.find('-') == std::string::npos ? 0 : to.find('-') + 1);
      ASSERT_EQ(report["mill"].size(), 3u) << report.dump();
      EXPECT_NE(std::find(report["mill"].begin(), report["mill"].end(), landed),
                report["mill"].end())
          << report.dump();
    } else {
      EXPECT_TRUE(report["mill"].empty()) << report.dump();
    }
    ASSERT_EQ(stored.moves_size(), static_cast<int>(before.size()) + 1);
    EXPECT_EQ(stored.moves(stored.moves_size() - 1).move(), move);
  }
}

TEST_F(WebTest, BrowserShowsTheLobbysReasonForARefusedMove) {
  SKIP_WITHOUT_BROWSER();
  const json report = Scenario("refused", {"beginner"});
  EXPECT_EQ(report["first"], "b2");  // played with the arrow keys and Enter
  EXPECT_EQ(report["notice"], "Move b2 refused: b2 is already taken");
}

TEST_F(WebTest, BrowserPageWeightAndTimeToTheFirstBoard) {
  SKIP_WITHOUT_BROWSER();
  const int64_t id = BotMatch("connect4", 100);
  WaitFinished(id);
  const json report = Scenario("weight", {std::to_string(id)});
  // The page is its own few files, nothing from elsewhere; its size is a budget (a heavy
  // framework would show here first). The times are a record, not a test (docs: README).
  std::vector<std::string> names;
  for (const json& f : report["cold"]["files"]) names.push_back(f["name"]);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"/", "/app.js", "/board.js", "/favicon.svg", "/style.css"}))
      << report.dump();
  const int bytes = report["cold"]["bytes"];
  EXPECT_GT(bytes, 20000);
  EXPECT_LT(bytes, 160000) << "the page grew past its budget: " << report.dump();
  EXPECT_GT(report["cold"]["boardMs"].get<int>(), 0);
  std::printf(
      "page weight %d bytes (%zu files); first board drawn %d ms after navigation cold, "
      "%d ms on reload\n",
      bytes, names.size(), report["cold"]["boardMs"].get<int>(),
      report["warm"]["boardMs"].get<int>());
}

TEST_F(WebTest, BrowserReloadKeepsTheSeat) {
  SKIP_WITHOUT_BROWSER();
  const json report = Scenario("reload", {"beginner"});
  EXPECT_EQ(report["you"], 1);
  EXPECT_GE(report["moves"].get<int>(), 4);
  EXPECT_EQ(report["tokenInPage"], false);
}

}  // namespace
}  // namespace ply::testing
