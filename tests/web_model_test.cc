// ply-web's pieces below the HTTP server: the request checks (input_check), the JSON it sends
// (match_json, the game list) and the boards it reads from each game's rendering (board_model).
// The gateway itself is web_gateway_test.cc's; its per-client budget is client_limits_test.cc's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client-web/board_model.h"
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

TEST(InputCheck, SwitchRequestsTakeTheirOneBooleanOnly) {
  EXPECT_EQ(*SwitchRequest(json::object(), "draw", false), false);
  EXPECT_EQ(*SwitchRequest(json::object(), "here", true), true);
  EXPECT_EQ(*SwitchRequest(json{{"draw", true}}, "draw", false), true);
  EXPECT_EQ(*SwitchRequest(json{{"decline", nullptr}}, "decline", false), false);
  EXPECT_FALSE(SwitchRequest(json{{"draw", "yes"}}, "draw", false).ok());
  EXPECT_FALSE(SwitchRequest(json{{"draw", 1}}, "draw", false).ok());
  EXPECT_FALSE(SwitchRequest(json{{"decline", true}}, "draw", false).ok());
  EXPECT_FALSE(SwitchRequest(json{{"draw", true}, {"x", 1}}, "draw", false).ok());
  EXPECT_FALSE(SwitchRequest(json::array({true}), "draw", false).ok());
  EXPECT_FALSE(SwitchRequest(json("draw"), "draw", false).ok());
}

// An untimed Connect Four match between two people, both having moved, Yellow (seat 1) to move.
v1::Match UntimedMatchYellowToMove() {
  v1::Match m;
  m.set_id(7);
  m.mutable_spec()->set_name("connect4");
  m.set_status(v1::MATCH_STATUS_ACTIVE);
  for (int i = 0; i < 2; ++i) {
    v1::Seat* seat = m.add_seats();
    seat->set_index(i);
    seat->set_kind(v1::SEAT_KIND_HUMAN);
    seat->set_taken(true);
    seat->set_display_name(i == 0 ? "alice" : "bob");
  }
  for (int i = 0; i < 3; ++i) m.add_moves()->set_ply(i + 1);
  m.set_to_move(1);
  m.set_claim_after_ms(120000);
  m.set_turn_started_ms(1000000);
  m.set_rematch_offer(-1);
  return m;
}

TEST(StateJson, SaysWhoLeftAndWhenTheOpponentMayClaim) {
  v1::Match m = UntimedMatchYellowToMove();
  json here = StateJson(m, {});
  EXPECT_EQ(here["away"], json::array());
  EXPECT_EQ(here["claim_after_ms"], 120000);

  // Bob went after his turn began: the claim counts from when he was last seen.
  m.mutable_seats(1)->set_away(true);
  m.mutable_seats(1)->set_away_since_ms(1005000);
  json gone = StateJson(m, {});
  ASSERT_EQ(gone["away"].size(), 1u);
  EXPECT_EQ(gone["away"][0]["seat"], 1);
  EXPECT_EQ(gone["away"][0]["name"], "bob");
  EXPECT_EQ(gone["away"][0]["claim_at_ms"], 1005000 + 120000);
  EXPECT_EQ(gone["seats"][1]["away"], true);

  // Alice away on Bob's move: she is announced, but there is nothing to claim against her.
  m.mutable_seats(1)->set_away(false);
  m.mutable_seats(0)->set_away(true);
  json not_on_move = StateJson(m, {});
  ASSERT_EQ(not_on_move["away"].size(), 1u);
  EXPECT_EQ(not_on_move["away"][0]["claim_at_ms"], 0);

  // A timed match is never claimed (the clock decides), and a finished one has nobody away.
  m.mutable_seats(0)->set_away(false);
  m.mutable_seats(1)->set_away(true);
  m.mutable_time_control()->set_initial_ms(60000);
  EXPECT_EQ(StateJson(m, {})["away"][0]["claim_at_ms"], 0);
  m.set_status(v1::MATCH_STATUS_FINISHED);
  m.set_rematch_offer(0);
  m.set_rematch_id(12);
  json over = StateJson(m, {});
  EXPECT_EQ(over["away"], json::array());
  EXPECT_EQ(over["rematch_offer"], 0);
  EXPECT_EQ(over["rematch_id"], 12);
}

TEST(MatchJson, AnAbandonedMatchSaysSo) {
  v1::Match m = UntimedMatchYellowToMove();
  m.set_status(v1::MATCH_STATUS_FINISHED);
  m.mutable_result()->set_reason(v1::END_REASON_ABANDONED);
  m.mutable_result()->set_winner(0);
  EXPECT_EQ(MatchJson(m, Reader::kPlayer)["result"]["reason"], "abandoned");
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

TEST(InputCheck, PlayerKeysComeOnlyAsAPlayerAuthorization) {
  EXPECT_EQ(*PlayerKey("Player ply_0123456789abcdef0123"), "ply_0123456789abcdef0123");
  // No key at all (a guest, or a seat's own call): no error, and nothing sent as the player.
  EXPECT_EQ(*PlayerKey(""), "");
  EXPECT_EQ(*PlayerKey("Bearer ply_0123456789abcdef0123"), "");
  EXPECT_EQ(PlayerKey("Player short").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_FALSE(PlayerKey("Player ply_0123456789abcdef\r\nX: y").ok());
  EXPECT_FALSE(PlayerKey("Player <script>alert(1)</script>xx").ok());
}

TEST(InputCheck, LoginPairAndLeaderboardRequestsAreChecked) {
  EXPECT_EQ(LoginRequest(json{{"name", "alice_1"}})->name(), "alice_1");
  EXPECT_EQ(LoginRequest(json::object())->name(), "");
  EXPECT_FALSE(LoginRequest(json{{"name", "a"}}).ok());
  EXPECT_FALSE(LoginRequest(json{{"name", "<b>"}}).ok());
  EXPECT_FALSE(LoginRequest(json{{"name", 7}}).ok());
  EXPECT_FALSE(LoginRequest(json::array()).ok());

  absl::StatusOr<v1::PairRequest> pair =
      PairRequest(json{{"game", "connect4"},
                       {"options", {{"width", "8"}}},
                       {"clock", {{"initial_s", 180}, {"increment_s", 2}}},
                       {"casual", true}});
  ASSERT_TRUE(pair.ok()) << pair.status();
  EXPECT_EQ(pair->spec().name(), "connect4");
  EXPECT_EQ(pair->spec().options().at("width"), "8");
  EXPECT_EQ(pair->time_control().initial_ms(), 180000);
  EXPECT_EQ(pair->time_control().increment_ms(), 2000);
  EXPECT_TRUE(pair->casual());
  EXPECT_FALSE(PairRequest(json{{"game", "chess"}}).ok());
  EXPECT_FALSE(PairRequest(json{{"game", "connect4"}, {"options", {{"nope", "1"}}}}).ok());
  EXPECT_FALSE(PairRequest(json{{"game", "connect4"}, {"clock", {{"initial_s", 1}}}}).ok());
  EXPECT_FALSE(PairRequest(json{{"game", "connect4"}, {"casual", "yes"}}).ok());

  EXPECT_EQ(LeaderboardRequest({.game = "reversi", .limit = "7"})->limit(), 7);
  EXPECT_EQ(LeaderboardRequest({.game = "reversi"})->limit(), 20);
  EXPECT_FALSE(LeaderboardRequest({.game = ""}).ok());
  EXPECT_FALSE(LeaderboardRequest({.game = "reversi", .limit = "500"}).ok());
  EXPECT_TRUE(CheckPlayerName("bot:hard").ok());
  EXPECT_FALSE(CheckPlayerName("x").ok());
  EXPECT_FALSE(CheckPlayerName("a/b").ok());
  EXPECT_EQ(
      PlayerMatchesRequest("bob", {.game = "gomoku", .limit = "5", .page = "42"})->page_token(),
      "42");
  EXPECT_FALSE(PlayerMatchesRequest("bob", {.page = "x y"}).ok());
}

TEST(MatchJson, SeatsCarryRatingsAndPairEventsTheSeat) {
  v1::Match m;
  m.set_id(3);
  v1::Seat* s = m.add_seats();
  s->set_kind(v1::SEAT_KIND_HUMAN);
  s->set_taken(true);
  s->set_player("alice");
  s->set_rating(1500);
  s->set_rating_after(1516);
  s->set_provisional(true);
  const json seat = StateJson(m, {})["seats"][0];
  EXPECT_EQ(seat["rating"], 1500);
  EXPECT_EQ(seat["rating_after"], 1516);
  EXPECT_EQ(seat["provisional"], true);
  EXPECT_EQ(seat["guest"], false);
  v1::PairEvent e;
  e.mutable_paired()->set_match_id(9);
  e.mutable_paired()->set_seat(1);
  e.mutable_paired()->set_seat_token("tok");
  EXPECT_EQ(PairEventJson(e)["paired"]["id"], 9);
  EXPECT_EQ(PairEventJson(e)["paired"]["token"], "tok");
  e.mutable_waiting()->set_rating_gap(150);
  EXPECT_EQ(PairEventJson(e)["waiting"]["rating_gap"], 150);
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
  EXPECT_FALSE(request->casual()) << "rated unless asked";
  {
    // The page's "Rated" box unchecked, and a casual search taking its bot offer, send this:
    // the gateway dropped it, and the game was rated (1500 -> 1074 for one resignation).
    json casual = good;
    casual["casual"] = true;
    absl::StatusOr<v1::CreateMatchRequest> r = CreateRequest(casual);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->casual());
  }

  auto refused = [&](const char* key, const json& value) {
    json bad = good;
    bad[key] = value;
    return !CreateRequest(bad).ok();
  };
  EXPECT_TRUE(refused("casual", "yes"));
  // A key the gateway does not know is refused, not dropped.
  EXPECT_TRUE(refused("casul", true));
  EXPECT_EQ(CreateRequest(json::parse(R"({"game": "connect4", "seats": [{}, {}], "rated": false})"))
                .status()
                .message(),
            "'rated' is not a field of this request");
  EXPECT_FALSE(PairRequest(json::parse(R"({"game": "connect4", "rated": false})")).ok());
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
  // Fields the gateway does not read are refused, not dropped (a second hostile review: a
  // "casual" join, a "bot": "true" seat made a person's open seat, {"decline": true} to the draw
  // route accepted the opponent's offer).
  EXPECT_FALSE(JoinRequest(1, json{{"seat", 1}, {"casual", true}}).ok());
  EXPECT_FALSE(MoveRequest(1, json{{"ply", 3}, {"move", "d3"}, {"promote", "q"}}).ok());
  EXPECT_FALSE(LoginRequest(json{{"name", "bob"}, {"password", "x"}}).ok());
  EXPECT_TRUE(NoFieldsRequest(json::object(), "a draw offer").ok());
  EXPECT_EQ(NoFieldsRequest(json{{"decline", true}}, "a draw offer").message(),
            "'decline' is not a field of this request: a draw offer takes none");
  EXPECT_FALSE(NoFieldsRequest(json::array(), "a resignation").ok());
  const json bot_as_text = json::parse(R"({"game": "connect4",
      "seats": [{}, {"bot": "true", "level": "hard"}], "take_seat": 0})");
  EXPECT_EQ(CreateRequest(bot_as_text).status().message(), "a seat's 'bot' must be true or false");
  EXPECT_FALSE(CreateRequest(json::parse(R"({"game": "connect4",
      "seats": [{}, {"bot": true, "levle": "hard"}]})"))
                   .ok());
  EXPECT_FALSE(CreateRequest(json::parse(R"({"game": "connect4", "seats": [{}, {}],
      "clock": {"initial_s": 60, "increment": 2}})"))
                   .ok());
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

}  // namespace
}  // namespace ply::web
