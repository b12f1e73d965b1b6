// ply-web without a lobby: what it refuses before the lobby would hear of it, the headers every
// answer carries, the per-client limits, and the boards it reads from each game's rendering.
#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "client-web/board_model.h"
#include "client-web/client_limits.h"
#include "client-web/gateway.h"
#include "client-web/input_check.h"
#include "client-web/match_json.h"
#include "engine/registry/registry.h"
#include "nlohmann/json.hpp"

namespace ply::web {
namespace {

using nlohmann::json;

TEST(GamesJson, CarriesTheNotationHintRecordFormatsAndLevelRatings) {
  v1::ListGamesResponse games;
  v1::GameInfo* g = games.add_games();
  g->set_name("draughts");
  g->set_notation_hint("11-15, or 11x18 for a capture");
  g->add_record_formats("pdn");
  v1::DifficultyLevel* ladder = g->add_levels();
  ladder->set_name("easy");
  ladder->set_rating(1201);
  ladder->set_rating_source(v1::RATING_SOURCE_LADDER);
  v1::DifficultyLevel* live = g->add_levels();
  live->set_name("hard");
  live->set_rating(1950);
  live->set_rating_source(v1::RATING_SOURCE_LIVE);
  live->set_rated_games(12);
  g->add_levels()->set_name("unrated");
  const json out = GamesJson(games)["games"][0];
  EXPECT_EQ(out["notation_hint"], "11-15, or 11x18 for a capture");
  EXPECT_EQ(out["record_formats"], json::array({"pdn"}));
  EXPECT_EQ(out["levels"][0]["rating"], 1201);
  EXPECT_EQ(out["levels"][0]["rating_source"], "ladder");
  EXPECT_EQ(out["levels"][1]["rating"], 1950);
  EXPECT_EQ(out["levels"][1]["rating_source"], "live");
  EXPECT_EQ(out["levels"][1]["rated_games"], 12);
  EXPECT_FALSE(out["levels"][2].contains("rating"));
}

TEST(InputCheck, MatchIdsAreSmallPositiveDecimals) {
  EXPECT_EQ(*MatchId("42"), 42);
  EXPECT_FALSE(MatchId("0").ok());
  EXPECT_FALSE(MatchId("-1").ok());
  EXPECT_FALSE(MatchId("1e3").ok());
  EXPECT_FALSE(MatchId("99999999999999999").ok());
  EXPECT_FALSE(MatchId("").ok());
}

TEST(InputCheck, PlyCountsAreBounded) {
  EXPECT_EQ(*PlyCount("0"), 0);
  EXPECT_EQ(*PlyCount("17"), 17);
  EXPECT_FALSE(PlyCount("100001").ok());
  EXPECT_FALSE(PlyCount("3; drop").ok());
}

TEST(InputCheck, MovesHoldOnlyNotationCharacters) {
  EXPECT_TRUE(CheckMove("22x15x6").ok());
  EXPECT_TRUE(CheckMove("g:ne").ok());
  EXPECT_TRUE(CheckMove("a1-a4xg7").ok());
  EXPECT_FALSE(CheckMove("").ok());
  EXPECT_FALSE(CheckMove("d3<script>").ok());
  EXPECT_FALSE(CheckMove(std::string(65, 'a')).ok());
}

TEST(InputCheck, NamesRefuseMarkupAndControlCharacters) {
  EXPECT_TRUE(CheckName("Zoë").ok());
  EXPECT_FALSE(CheckName("<b>bob</b>").ok());
  EXPECT_FALSE(CheckName("a\nb").ok());
  EXPECT_FALSE(CheckName(std::string(33, 'x')).ok());
}

TEST(InputCheck, BearerTokensHaveTheLobbysShape) {
  EXPECT_EQ(*BearerToken("Bearer ply_0123456789abcdef0123"), "ply_0123456789abcdef0123");
  EXPECT_EQ(BearerToken("").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(BearerToken("Basic abc").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_FALSE(BearerToken("Bearer short").ok());
  EXPECT_FALSE(BearerToken("Bearer ply_0123456789abcdef\r\nX: y").ok());
}

TEST(InputCheck, CreateRequestChecksGameOptionsSeatsAndLevels) {
  const json good = json::parse(R"({"game": "connect4", "options": {"width": "8"},
      "seats": [{"bot": false}, {"bot": true, "level": "easy"}], "take_seat": 0, "name": "ann",
      "clock": {"initial_s": 60, "increment_s": 2}})");
  absl::StatusOr<v1::CreateMatchRequest> request = CreateRequest(good);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->spec().options().at("width"), "8");
  EXPECT_EQ(request->seats(1).kind(), v1::SEAT_KIND_BOT);
  EXPECT_EQ(request->take_seat(), 0);
  EXPECT_EQ(request->time_control().initial_ms(), 60000);

  auto refused = [&](const char* key, const json& value) {
    json bad = good;
    bad[key] = value;
    return !CreateRequest(bad).ok();
  };
  EXPECT_TRUE(refused("game", "chess"));
  EXPECT_TRUE(refused("game", 7));
  EXPECT_TRUE(refused("options", json{{"colour", "red"}}));
  EXPECT_TRUE(refused("options", json{{"width", 8}}));
  EXPECT_TRUE(refused("seats", json::array({json{{"bot", false}}})));
  EXPECT_TRUE(refused("seats", json::parse(R"([{"bot": false}, {"bot": true, "level": "god"}])")));
  EXPECT_TRUE(refused("take_seat", 2));
  EXPECT_TRUE(refused("take_seat", 1));  // a bot's seat
  EXPECT_TRUE(refused("name", "<img src=x>"));
  EXPECT_TRUE(refused("clock", json{{"initial_s", 1}}));
  EXPECT_FALSE(CreateRequest(json::array()).ok());
}

TEST(InputCheck, MoveAndJoinRequestsAreChecked) {
  EXPECT_TRUE(MoveRequest(1, json{{"ply", 3}, {"move", "d3"}}).ok());
  EXPECT_FALSE(MoveRequest(1, json{{"move", "d3"}}).ok());
  EXPECT_FALSE(MoveRequest(1, json{{"ply", -1}, {"move", "d3"}}).ok());
  EXPECT_FALSE(MoveRequest(1, json{{"ply", 3}, {"move", "d3 d4"}}).ok());
  EXPECT_TRUE(JoinRequest(1, json{{"seat", 1}, {"name", "bob"}}).ok());
  EXPECT_FALSE(JoinRequest(1, json{{"seat", 5}}).ok());
  EXPECT_FALSE(ListRequest({.status = "lost"}).ok());
  EXPECT_FALSE(ListRequest({.limit = "500"}).ok());
  EXPECT_EQ(ListRequest({.limit = "5"})->page_size(), 5);
}

// The board the page gets for `moves` of `game` with `options`.
json Board(const std::string& game, const GameOptions& options,
           const std::vector<std::string>& moves) {
  absl::StatusOr<std::unique_ptr<AnyGame>> g = ReplayGame(game, options, moves);
  EXPECT_TRUE(g.ok()) << g.status();
  return BoardModel(game, (*g)->Render());
}

TEST(BoardModel, ReadsEveryGamesRendering) {
  json c4 = Board("connect4", {{"width", "8"}, {"height", "5"}, {"cylinder", "true"}}, {"1", "8"});
  ASSERT_EQ(c4["rows"].size(), 5u);
  EXPECT_EQ(c4["rows"][4], "10000002");

  json ttt = Board("tictactoe", {}, {"a1", "b2"});
  EXPECT_EQ(ttt["rows"], json::array({"100", "020", "000"}));

  json t2 = Board("tictactwo", {}, {"b2"});
  EXPECT_EQ(t2["rows"][1], "01000");
  EXPECT_EQ(t2["grid"], json::array({1, 1, 3, 3}));
  EXPECT_EQ(t2["hand"], json::array({3, 4}));

  json rev = Board("reversi", {{"width", "6"}, {"height", "6"}, {"walls", "a1+f6"}}, {});
  EXPECT_EQ(rev["rows"][0], "#00000");
  EXPECT_EQ(rev["rows"][2], "002100");
  EXPECT_EQ(rev["rows"][5], "00000#");

  json gomoku = Board("gomoku", {{"size", "9"}}, {"a1"});
  EXPECT_EQ(gomoku["rows"].size(), 9u);
  EXPECT_EQ(gomoku["rows"][8], "100000000");

  json morris = Board("morris", {}, {"a1", "g7"});
  ASSERT_EQ(morris["rows"].size(), 7u);
  EXPECT_EQ(morris["rows"][0], "0  0  2");
  EXPECT_EQ(morris["rows"][6], "1  0  0");
  EXPECT_EQ(morris["hand"], json::array({8, 8}));

  json draughts = Board("draughts", {}, {"11-15"});
  ASSERT_EQ(draughts["rows"].size(), 8u);
  EXPECT_EQ(draughts["rows"][0], " 1 1 1 1");
  EXPECT_EQ(draughts["rows"][2], " 1 1 0 1");
  EXPECT_EQ(draughts["rows"][3], "0 0 1 0 ");
  EXPECT_EQ(draughts["rows"][7], "2 2 2 2 ");
}

TEST(BoardModel, TextThatIsNoBoardGivesNull) {
  EXPECT_TRUE(BoardModel("connect4", "hello\nworld").is_null());
  EXPECT_TRUE(BoardModel("draughts", "").is_null());
}

TEST(ClientLimits, RateIsPerClient) {
  ClientLimits limits(/*per_s=*/1, /*burst=*/3, /*streams=*/2);
  const absl::Time t = absl::Now();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limits.Admit("a", t));
  EXPECT_FALSE(limits.Admit("a", t));
  EXPECT_TRUE(limits.Admit("b", t));
  EXPECT_TRUE(limits.Admit("a", t + absl::Seconds(1)));
  EXPECT_TRUE(limits.OpenStream("a"));
  EXPECT_TRUE(limits.OpenStream("a"));
  EXPECT_FALSE(limits.OpenStream("a"));
  limits.Release("a");
  EXPECT_TRUE(limits.OpenStream("a"));
}

// A gateway in this process, in front of a lobby that is not there: everything here must be
// answered before any lobby call.
class GatewayHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<client::LobbyTarget> target = client::ParseServers("127.0.0.1:1");
    ASSERT_TRUE(target.ok());
    gateway_ = std::make_unique<Gateway>(
        *target, nullptr,
        GatewayOptions{.client_rps = 5, .client_burst = 20, .max_streams = 0, .max_body = 1024});
    gateway_->Install(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }
  httplib::Client Client() {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(15, 0);
    return c;
  }

  httplib::Server server_;
  std::unique_ptr<Gateway> gateway_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(GatewayHttp, PageAndApiCarryTheSecurityHeaders) {
  httplib::Client c = Client();
  httplib::Result page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  const std::string csp = page->get_header_value("Content-Security-Policy");
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(page->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(page->get_header_value("X-Frame-Options"), "DENY");
  EXPECT_EQ(page->body.find("<script>"), std::string::npos);

  httplib::Result js = c.Get("/app.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");

  httplib::Result api = c.Get("/api/matches/abc");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 404);
  EXPECT_EQ(api->get_header_value("Cache-Control"), "no-store");
  EXPECT_EQ(api->get_header_value("Content-Type"), "application/json; charset=utf-8");
  EXPECT_EQ(c.Get("/../etc/passwd")->status, 404);
}

TEST_F(GatewayHttp, RefusesBadRequestsBeforeTheLobby) {
  httplib::Client c = Client();
  // A form post (what another site could make a browser send) is not JSON.
  httplib::Result form =
      c.Post("/api/matches", "game=connect4", "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 400);
  EXPECT_NE(form->body.find("application/json"), std::string::npos);

  httplib::Result bad = c.Post("/api/matches", R"({"game": "chess"})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(json::parse(bad->body)["error"], "no game 'chess'");

  httplib::Result no_token =
      c.Post("/api/matches/5/move", R"({"ply": 0, "move": "4"})", "application/json");
  ASSERT_TRUE(no_token);
  EXPECT_EQ(no_token->status, 401);

  httplib::Result big = c.Post("/api/matches", std::string(4096, ' '), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);

  httplib::Result resume = c.Get("/api/matches/5/events", {{"Last-Event-ID", "x"}});
  ASSERT_TRUE(resume);
  EXPECT_EQ(resume->status, 400);
}

TEST_F(GatewayHttp, AFloodingClientGets429) {
  httplib::Client c = Client();
  int refused = 0;
  for (int i = 0; i < 40; ++i) {
    httplib::Result r = c.Get("/api/matches?status=lost");
    ASSERT_TRUE(r);
    if (r->status == 429) ++refused;
  }
  EXPECT_GT(refused, 10);
  EXPECT_EQ(c.Get("/healthz")->status, 200);
}

TEST_F(GatewayHttp, AFullGatewayRefusesNewStreamsAndServesTheRest) {
  httplib::Client c = Client();
  httplib::Result stream = c.Get("/api/matches/5/events");
  ASSERT_TRUE(stream);
  EXPECT_EQ(stream->status, 503);
  EXPECT_EQ(stream->get_header_value("Retry-After"), "5");
  EXPECT_EQ(c.Get("/")->status, 200);
}

TEST_F(GatewayHttp, AnUnreachableLobbyIsA503WithASentence) {
  httplib::Client c = Client();
  httplib::Result r = c.Get("/api/games");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(json::parse(r->body)["error"].get<std::string>().find("lobby"), std::string::npos);
}

}  // namespace
}  // namespace ply::web
