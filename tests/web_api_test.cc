// ply-web's API in front of a real stack, without a browser: event streams that resume from the
// last ply and keep a bot's thinking from its opponent, replay marks, a page's presence beats and
// claims, client addresses, log-in, pairing and ratings, rematches (tests/web_fixture.h).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "tests/raw_http.h"
#include "tests/web_fixture.h"

namespace ply::testing {
namespace {

using v1::SEAT_KIND_BOT;
using v1::SEAT_KIND_HUMAN;

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
  // Nor does a spectator: the lobby keeps it from everyone while a person plays (its empty
  // search, passed on as depth 0, read as a random move on the page).
  EXPECT_NE(spectator.find("\"instance\""), std::string::npos);
  EXPECT_EQ(spectator.find("\"depth\""), std::string::npos);
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
  EXPECT_EQ(replay["analysis"]["players"][0]["moves"], 4) << "the page names a side with none";
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

TEST_F(WebTest, TheLobbyTrustsTheGatewayByItsSecretWhateverItsAddress) {
  // The shipped Compose and Kubernetes files gave the lobby no --trusted_proxies (they cannot
  // know ply-web's addresses), so every visitor shared one client's quotas: one person used up
  // the site's registrations for an hour. The gateway now proves itself with a secret.
  const std::string secret_file = absl::StrCat(::testing::TempDir(), "/proxy_token");
  {
    std::FILE* f = std::fopen(secret_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("a7c3e9d1f0b24c6a8e5d7f9b1c3a5e7d\n", f);
    std::fclose(f);
  }
  lobby_.reset();
  StartLobby({absl::StrCat("--proxy_token_file=", secret_file), "--client_waiting_matches=1",
              "--client_registrations_per_hour=1"});
  auto start_web = [&](bool with_secret) {
    std::vector<std::string> flags = {"--port=0", "--host=127.0.0.1",
                                      absl::StrCat("--lobby=", lobby_->address()),
                                      "--trust_forwarded_for"};
    if (with_secret) flags.push_back(absl::StrCat("--proxy_token_file=", secret_file));
    return ServerProcess::StartPlain(PLY_WEB_BINARY, flags);
  };
  auto web = start_web(true);
  ASSERT_TRUE(web.ok()) << web.status();
  httplib::Client c("127.0.0.1", (*web)->port());
  auto open = [&](httplib::Client& client, const std::string& browser) {
    const json request = {{"game", "tictactoe"},
                          {"name", "someone"},
                          {"seats", json::array({json{{"bot", false}}, json{{"bot", false}}})},
                          {"take_seat", 0}};
    httplib::Result r = client.Post("/api/matches", {{"X-Forwarded-For", browser}}, request.dump(),
                                    "application/json");
    return r ? r->status : 0;
  };
  auto login = [&](httplib::Client& client, const std::string& browser, const std::string& name) {
    httplib::Result r = client.Post("/api/login", {{"X-Forwarded-For", browser}},
                                    json{{"name", name}}.dump(), "application/json");
    return r ? r->status : 0;
  };
  EXPECT_EQ(open(c, "198.51.100.7"), 201);
  EXPECT_EQ(open(c, "198.51.100.7"), 429) << "the first browser's own quota";
  EXPECT_EQ(open(c, "198.51.100.8"), 201) << "another browser is not held back by the first";
  EXPECT_EQ(login(c, "198.51.100.7", "first"), 200);
  EXPECT_EQ(login(c, "198.51.100.7", "second"), 429) << "one registration an hour an address";
  EXPECT_EQ(login(c, "198.51.100.8", "third"), 200) << "not the whole site's";
  // A gateway without the secret is one client, whoever its browsers are.
  auto plain = start_web(false);
  ASSERT_TRUE(plain.ok()) << plain.status();
  httplib::Client p("127.0.0.1", (*plain)->port());
  EXPECT_EQ(open(p, "203.0.113.1"), 201);
  EXPECT_EQ(open(p, "203.0.113.2"), 429) << "both browsers are the gateway";
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
  EXPECT_EQ(json::parse(created->body)["match"]["rated"], true);
  // The page's "Rated" box unchecked: a casual match (the gateway dropped the field, and it was
  // rated).
  httplib::Result casual =
      post("/api/matches", absl::StrCat("Player ", key),
           {{"game", "tictactoe"},
            {"seats", json::array({json{{"bot", false}}, json{{"bot", true}, {"level", "easy"}}})},
            {"take_seat", 0},
            {"casual", true},
            {"clock", {{"initial_s", 60}, {"increment_s", 2}}}});
  ASSERT_TRUE(casual && casual->status == 201) << (casual ? casual->body : "no answer");
  EXPECT_EQ(json::parse(casual->body)["match"]["rated"], false);
  // Profiles, a player's matches and the leaderboard, as the lobby has them.
  httplib::Result profile = c.Get("/api/players/carol");
  ASSERT_TRUE(profile && profile->status == 200) << (profile ? profile->body : "no answer");
  EXPECT_EQ(json::parse(profile->body)["name"], "carol");
  httplib::Result history = c.Get("/api/players/carol/matches?limit=5");
  ASSERT_TRUE(history && history->status == 200) << (history ? history->body : "no answer");
  const json listed = json::parse(history->body)["matches"];
  ASSERT_EQ(listed.size(), 2u);
  // Newest first: the casual one, with its clock; lists say both (a player choosing an open seat
  // sees them before joining).
  EXPECT_EQ(listed[0]["rated"], false);
  EXPECT_EQ(listed[0]["time_control"]["initial_ms"], 60000);
  EXPECT_EQ(listed[0]["time_control"]["increment_ms"], 2000);
  EXPECT_TRUE(listed[1]["time_control"].is_null());
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

TEST_F(WebTest, APostWithNoBodyIsAnEmptyOneNotAnErrorAfterATimeout) {
  // `curl -X POST URL` sends neither Content-Length nor a body: the gateway read until its
  // timeout and answered 400 "no such request". Such a request has an empty body.
  HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "connect4");
  ASSERT_TRUE(Move(stub_.get(), seats.id, 0, "4", seats.tokens[0]).ok());
  RawConnection raw(web_->port());
  ASSERT_TRUE(raw.connected());
  const absl::Time sent = absl::Now();
  ASSERT_TRUE(raw.Send(absl::StrCat("POST /api/matches/", seats.id,
                                    "/draw HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ",
                                    seats.tokens[1], "\r\nConnection: close\r\n\r\n")));
  const std::string answer = raw.Receive(absl::Seconds(10));
  EXPECT_LT(absl::Now() - sent, absl::Seconds(2)) << answer;
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 200")) << answer;
  EXPECT_EQ(Get(seats.id).draw_offer(), 1);
  // The first player "declines" the offer through the draw route: a field that route does not
  // know is refused, where it was ignored and the call was an offer that agreed the draw.
  httplib::Result decline = Post(absl::StrCat("/api/matches/", seats.id, "/draw"), seats.tokens[0],
                                 json{{"decline", true}});
  ASSERT_TRUE(decline);
  EXPECT_EQ(decline->status, 400) << decline->body;
  EXPECT_EQ(Get(seats.id).status(), v1::MATCH_STATUS_ACTIVE);
  EXPECT_EQ(Get(seats.id).draw_offer(), 1);
  // A body cut short is a bad request, and said so.
  RawConnection cut(web_->port());
  ASSERT_TRUE(cut.Send(absl::StrCat("POST /api/matches/", seats.id,
                                    "/draw HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n",
                                    "Connection: close\r\n\r\n{}")));
  cut.ShutdownWrite();
  const std::string bad = cut.Receive(absl::Seconds(10));
  EXPECT_NE(bad.find("malformed request"), std::string::npos) << bad;
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

}  // namespace
}  // namespace ply::testing
