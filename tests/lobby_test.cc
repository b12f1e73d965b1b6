// ply-lobby end to end: a real PostgreSQL cluster (throwaway, started here), real ply-bot
// processes and a real ply-lobby process, talked to over gRPC on loopback. Each test gets its
// own database and its own lobby (stack_helper.h's LobbyFixture). The clocks, draws by agreement
// and resignation are in lobby_clock_test.cc, on the same fixture.
#include "lobby-server/lobby.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/core/random.h"
#include "engine/registry/registry.h"
#include "lobby-server/bot_targets.h"
#include "lobby-server/client_limits.h"
#include "lobby-server/executor.h"
#include "lobby-server/storage/postgres/postgres_store.h"
#include "lobby-server/token.h"
#include "ply/v1/bot.grpc.pb.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/postgres_helper.h"
#include "tests/process_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::PostgresCluster;
using ::ply::testing::ServerProcess;

using ::ply::testing::HasGameOver;
using ::ply::testing::MovesSeen;
using ::ply::testing::Race;
using ::ply::testing::RaceCount;
using ::ply::testing::TakingSeat;
using ::ply::testing::Watch;

using LobbyTest = ::ply::testing::LobbyFixture;

TEST_F(LobbyTest, ListsEveryGameWithLevels) {
  v1::ListGamesResponse games;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->ListGames(&context, v1::ListGamesRequest(), &games).ok());
  ASSERT_GE(games.games_size(), 7);
  for (const v1::GameInfo& g : games.games()) {
    EXPECT_GE(g.levels_size(), 3) << g.name();
    EXPECT_EQ(g.player_names_size(), 2) << g.name();
  }
}

TEST_F(LobbyTest, HumanVsHumanPlaysToAWinAndStoresOnlyTokenHashes) {
  auto [id, tokens] = HumanMatch("tictactoe");
  Watch spectator(stub_.get(), id);
  const std::vector<std::string> moves = {"a1", "b1", "a2", "b2", "a3"};
  for (size_t i = 0; i < moves.size(); ++i) {
    v1::MakeMoveResponse r;
    grpc::Status s =
        Move(id, static_cast<int>(i), moves[i], i % 2 ? tokens.second : tokens.first, &r);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(r.move().ply(), static_cast<int>(i) + 1);
  }
  v1::Match m = Get(id);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().winner(), 0);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_RULES);
  EXPECT_NE(m.result().text().find("three in a row"), std::string::npos) << m.result().text();
  EXPECT_EQ(m.moves_size(), 5);
  ASSERT_TRUE(spectator.WaitDone(absl::Seconds(10)));
  EXPECT_TRUE(spectator.status().ok()) << spectator.status().error_message();
  EXPECT_EQ(MovesSeen(spectator.events()), moves);
  EXPECT_TRUE(HasGameOver(spectator.events()));

  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", id)), "5");
  EXPECT_EQ(Sql(absl::StrCat(
                "SELECT string_agg(move, ' ' ORDER BY ply) FROM moves WHERE match_id = ", id)),
            "a1 b1 a2 b2 a3");
  // The database has the hash of each token, never the token.
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM seats WHERE token_hash = '", tokens.first, "'")),
            "0");
  EXPECT_EQ(
      Sql(absl::StrCat("SELECT token_hash FROM seats WHERE match_id = ", id, " AND seat = 0")),
      lobby::TokenHash(tokens.first));
}

TEST_F(LobbyTest, HumanVsHumanPlaysToADraw) {
  auto [id, tokens] = HumanMatch("tictactoe");
  const std::vector<std::string> moves = {"b2", "a1", "a2", "c2", "b1", "b3", "c3", "a3", "c1"};
  for (size_t i = 0; i < moves.size(); ++i) {
    ASSERT_TRUE(Move(id, static_cast<int>(i), moves[i], i % 2 ? tokens.second : tokens.first).ok());
  }
  v1::Match m = Get(id);
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(m.result().winner(), -1);
  EXPECT_EQ(m.result().reason(), v1::END_REASON_RULES);
}

TEST_F(LobbyTest, HumanPlaysBotsAtTwoLevels) {
  struct Case {
    std::string game, level;
  };
  for (const Case& c : {Case{"connect4", "beginner"}, Case{"tictactoe", "hard"}}) {
    v1::CreateMatchResponse created;
    ASSERT_TRUE(Create(c.game, {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT}, {"", c.level}, &created,
                       TakingSeat(0, "carol"))
                    .ok());
    EXPECT_EQ(created.match().status(), v1::MATCH_STATUS_ACTIVE);
    const int64_t id = created.match().id();
    v1::Match end = PlayAgainstBot(id, created.seat_token(), 0);
    ASSERT_EQ(end.status(), v1::MATCH_STATUS_FINISHED) << c.game;
    int bot_moves = 0;
    for (const v1::MoveRecord& mv : end.moves()) {
      if (mv.seat() != 1) continue;
      ++bot_moves;
      EXPECT_TRUE(mv.has_bot());
      EXPECT_FALSE(mv.bot().instance().empty());
    }
    EXPECT_GT(bot_moves, 0);
    // Tic-Tac-Toe's hard level never loses.
    if (c.game == "tictactoe") {
      EXPECT_NE(end.result().winner(), 0);
    }
  }
}

// The value of a Tic-Tac-Toe position for the side to move, by full search: +1 win, 0 draw,
// -1 loss (the test's own judge of which offers a bot should take).
int TicTacToeValue(AnyGame& g) {
  const GameStatus st = g.Status();
  if (st.over) return st.winner < 0 ? 0 : (st.winner == g.SideToMove() ? 1 : -1);
  int best = -2;
  for (const std::string& m : g.LegalMoves()) {
    EXPECT_TRUE(g.Play(m).ok());
    best = std::max(best, -TicTacToeValue(g));
    EXPECT_TRUE(g.Undo().ok());
  }
  return best;
}

// A person who offers a bot a draw gets its answer at once: accepted in a drawn position (the
// match ends, a draw by agreement), declined with its reason where the bot is winning (the
// offer is withdrawn and everyone is told why).
// A draw offer still standing when the bot's move is ready is answered by that move's search, so
// the move never passes over it in silence: here the move, on a short clock (a twentieth of 4 s),
// comes long before the offer's own search of a second would.
TEST_F(LobbyTest, ABotsMoveNeverPassesOverADrawOfferUnanswered) {
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create("gomoku", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT}, {"", "hard"}, &created,
                     [](v1::CreateMatchRequest& r) {
                       TakingSeat(0, "dora")(r);
                       r.mutable_time_control()->set_initial_ms(4000);
                     })
                  .ok());
  const int64_t id = created.match().id();
  Watch watch(stub_.get(), id);
  ASSERT_TRUE(Move(id, 0, "h8", created.seat_token()).ok());
  v1::OfferDrawRequest request;
  request.set_match_id(id);
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + created.seat_token());
  v1::Match offered;
  ASSERT_TRUE(stub_->OfferDraw(&context, request, &offered).ok());
  const auto answered = [](const std::vector<v1::MatchEvent>& events) {
    for (const v1::MatchEvent& e : events) {
      if (e.has_game_over() || (e.has_move_applied() && e.move_applied().move().ply() == 2)) {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(watch.WaitFor(answered, absl::Seconds(10)));
  // The answer comes before the bot's move: a decline in the bot's words, or the draw agreed.
  bool declined = false;
  for (const v1::MatchEvent& e : watch.events()) {
    if (e.has_draw_declined()) {
      declined = true;
      EXPECT_EQ(e.draw_declined().seat(), 1);
      EXPECT_NE(e.draw_declined().text().find("Black (bot, hard) declines the draw"),
                std::string::npos)
          << e.draw_declined().text();
    }
    if (e.has_move_applied() && e.move_applied().move().ply() == 2) {
      EXPECT_TRUE(declined) << "the bot moved over the offer without an answer";
      break;
    }
    if (e.has_game_over()) {
      EXPECT_EQ(e.game_over().result().reason(), v1::END_REASON_AGREEMENT);
      break;
    }
  }
  const v1::Match m = Get(id);
  EXPECT_EQ(m.draw_offer(), -1);
}

TEST_F(LobbyTest, ABotAnswersADrawOfferAtOnceFromItsSearch) {
  const auto offer = [&](int64_t id, const std::string& token) {
    v1::OfferDrawRequest request;
    request.set_match_id(id);
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token);
    v1::Match m;
    return stub_->OfferDraw(&context, request, &m);
  };
  {
    // Drawn: X takes the centre, the bot answers; Tic-Tac-Toe is then a proven draw.
    v1::CreateMatchResponse created;
    ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT}, {"", "hard"},
                       &created, TakingSeat(0, "dora"))
                    .ok());
    const int64_t id = created.match().id();
    ASSERT_TRUE(Move(id, 0, "b2", created.seat_token()).ok());
    WaitMatch(id, [](const v1::Match& m) { return m.moves_size() == 2; });
    const absl::Time asked = absl::Now();
    ASSERT_TRUE(offer(id, created.seat_token()).ok());
    v1::Match end = WaitMatch(
        id, [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; },
        absl::Seconds(10));
    EXPECT_LT(absl::Now() - asked, absl::Seconds(3)) << "answered at once";
    ASSERT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
    EXPECT_EQ(end.result().reason(), v1::END_REASON_AGREEMENT);
    EXPECT_EQ(end.result().winner(), -1);
  }
  {
    // Lost for the person: the bot (X) opens, the person answers with a move the search proves
    // lost, the bot plays on; the person's offer is declined with the bot's reason.
    v1::CreateMatchResponse created;
    ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_HUMAN}, {"hard", ""},
                       &created, TakingSeat(1, "dora"))
                    .ok());
    const int64_t id = created.match().id();
    const std::string token = created.seat_token();
    v1::Match m = WaitMatch(id, [](const v1::Match& m) { return m.moves_size() == 1; });
    ASSERT_EQ(m.moves_size(), 1);
    absl::StatusOr<std::unique_ptr<AnyGame>> g =
        ReplayGame("tictactoe", {}, std::vector<std::string>{m.moves(0).move()});
    ASSERT_TRUE(g.ok());
    std::string losing;
    for (const std::string& reply : (*g)->LegalMoves()) {
      ASSERT_TRUE((*g)->Play(reply).ok());
      if (TicTacToeValue(**g) == 1) losing = reply;  // X, to move, wins
      ASSERT_TRUE((*g)->Undo().ok());
      if (!losing.empty()) break;
    }
    ASSERT_FALSE(losing.empty());
    ASSERT_TRUE(Move(id, 1, losing, token).ok());
    m = WaitMatch(id, [](const v1::Match& m) {
      return m.moves_size() == 3 || m.status() == v1::MATCH_STATUS_FINISHED;
    });
    ASSERT_EQ(m.status(), v1::MATCH_STATUS_ACTIVE);
    Watch watch(stub_.get(), id);
    ASSERT_TRUE(offer(id, token).ok());
    ASSERT_TRUE(watch.WaitFor(
        [](const std::vector<v1::MatchEvent>& events) {
          for (const v1::MatchEvent& e : events) {
            if (e.has_draw_declined()) return true;
          }
          return false;
        },
        absl::Seconds(5)));
    for (const v1::MatchEvent& e : watch.events()) {
      if (!e.has_draw_declined()) continue;
      EXPECT_EQ(e.draw_declined().seat(), 0);
      EXPECT_NE(e.draw_declined().text().find("declines the draw: it sees a forced win"),
                std::string::npos)
          << e.draw_declined().text();
    }
    m = WaitMatch(id, [](const v1::Match& m) { return m.draw_offer() < 0; });
    EXPECT_EQ(m.draw_offer(), -1) << "the offer is withdrawn";
    EXPECT_EQ(m.status(), v1::MATCH_STATUS_ACTIVE);
  }
}

TEST_F(LobbyTest, ABotsThinkingIsHiddenFromEveryoneWhileAPersonPlaysItAndShownAfter) {
  // A spectator (or the person on a second connection, with no token) used to read the bot's
  // principal variation and score during the game: its plan, and how it judged the position.
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create("connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT}, {"", "medium"}, &created,
                     TakingSeat(0, "carol"))
                  .ok());
  const int64_t id = created.match().id();
  Watch spectator(stub_.get(), id);
  ASSERT_TRUE(Move(id, 0, "4", created.seat_token()).ok());
  ASSERT_TRUE(
      spectator.WaitFor([](const auto& e) { return MovesSeen(e).size() >= 2; }, absl::Seconds(30)));
  auto hidden = [](const v1::MoveRecord& mv) {
    return mv.has_bot() && !mv.bot().instance().empty() && mv.bot().pv_size() == 0 &&
           mv.bot().score_text().empty() && mv.bot().depth() == 0 && mv.bot().nodes() == 0;
  };
  const v1::Match during = Get(id);
  ASSERT_GE(during.moves_size(), 2);
  EXPECT_TRUE(hidden(during.moves(1))) << during.moves(1).DebugString();
  for (const v1::MatchEvent& e : spectator.events()) {
    if (e.has_move_applied() && e.move_applied().move().seat() == 1) {
      EXPECT_TRUE(hidden(e.move_applied().move())) << e.DebugString();
    }
    if (e.has_snapshot()) {
      for (const v1::MoveRecord& mv : e.snapshot().moves()) {
        if (mv.seat() == 1) {
          EXPECT_TRUE(hidden(mv)) << mv.DebugString();
        }
      }
    }
  }
  // Once the game is over, everyone may see what the bot saw.
  ASSERT_TRUE(::ply::testing::Resign(stub_.get(), id, created.seat_token()).ok());
  const v1::Match after = Get(id);
  ASSERT_EQ(after.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_FALSE(after.moves(1).bot().score_text().empty());
  EXPECT_GT(after.moves(1).bot().depth(), 0);
  EXPECT_GT(after.moves(1).bot().pv_size(), 0);
  // A match of bots only is for watching: their thinking shows live.
  v1::CreateMatchResponse bots;
  ASSERT_TRUE(
      Create("connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"medium", "medium"}, &bots).ok());
  Watch watching(stub_.get(), bots.match().id());
  ASSERT_TRUE(
      watching.WaitFor([](const auto& e) { return MovesSeen(e).size() >= 4; }, absl::Seconds(60)));
  int shown = 0;
  for (const v1::MatchEvent& e : watching.events()) {
    if (e.has_move_applied() && e.move_applied().move().bot().depth() > 0) ++shown;
  }
  EXPECT_GT(shown, 0);
}

TEST_F(LobbyTest, TwoSpectatorsSeeTheSameBotGame) {
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create("connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"easy", "medium"},
                     &created, [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(30); })
                  .ok());
  const int64_t id = created.match().id();
  Watch a(stub_.get(), id);
  Watch b(stub_.get(), id);
  ASSERT_TRUE(a.WaitDone(absl::Seconds(120)));
  ASSERT_TRUE(b.WaitDone(absl::Seconds(10)));
  EXPECT_TRUE(a.status().ok()) << a.status().error_message();
  EXPECT_TRUE(b.status().ok()) << b.status().error_message();
  v1::Match end = Get(id);
  ASSERT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
  std::vector<std::string> stored;
  for (const auto& m : end.moves()) stored.push_back(m.move());
  EXPECT_EQ(MovesSeen(a.events()), stored);
  EXPECT_EQ(MovesSeen(b.events()), stored);
  ASSERT_TRUE(HasGameOver(a.events()));
  ASSERT_TRUE(HasGameOver(b.events()));
  EXPECT_EQ(a.events().back().game_over().result().SerializeAsString(),
            b.events().back().game_over().result().SerializeAsString());
  EXPECT_EQ(a.events().back().game_over().result().winner(), end.result().winner());
  // Sequence numbers count every event of a stream.
  const std::vector<v1::MatchEvent> events = a.events();
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].sequence(), int64_t(i + 1));
  // Pacing: bot moves come at least 30 ms apart.
  for (int i = 1; i < end.moves_size(); ++i) {
    EXPECT_GE(end.moves(i).time_ms() - end.moves(i - 1).time_ms(), 29) << i;
  }
}

TEST_F(LobbyTest, RejectsBadRequestsWithTheirCodes) {
  auto [id, tokens] = HumanMatch("tictactoe");
  auto [other, other_tokens] = HumanMatch("tictactoe");
  auto code = [](const grpc::Status& s) { return s.error_code(); };
  auto has_message = [](const grpc::Status& s) { return !s.error_message().empty(); };

  grpc::Status s = Move(id, 0, "z9", tokens.first);
  EXPECT_EQ(code(s), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(has_message(s));
  s = Move(id, 0, "a1", tokens.second);
  EXPECT_EQ(code(s), grpc::StatusCode::FAILED_PRECONDITION) << "out of turn";
  EXPECT_NE(s.error_message().find("not your turn"), std::string::npos) << s.error_message();
  s = Move(id, 3, "a1", tokens.first);
  EXPECT_EQ(code(s), grpc::StatusCode::FAILED_PRECONDITION) << "wrong ply";
  EXPECT_NE(s.error_message().find("ply"), std::string::npos) << s.error_message();
  EXPECT_EQ(code(Move(id, 0, "a1", "")), grpc::StatusCode::UNAUTHENTICATED) << "spectator";
  EXPECT_EQ(code(Move(id, 0, "a1", "not-a-token")), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(code(Move(id, 0, "a1", lobby::NewSeatToken())), grpc::StatusCode::UNAUTHENTICATED);
  s = Move(id, 0, "a1", other_tokens.first);
  EXPECT_EQ(code(s), grpc::StatusCode::PERMISSION_DENIED) << "foreign token";
  EXPECT_EQ(code(Move(987654, 0, "a1", tokens.first)), grpc::StatusCode::NOT_FOUND);
  s = Move(id, 0, std::string(2000, 'a'), tokens.first);
  EXPECT_EQ(code(s), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 200u);
  // A message over the lobby's size limit is refused by gRPC before it is parsed.
  EXPECT_EQ(code(Move(id, 0, std::string(100000, 'a'), tokens.first)),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(code(Move(-1, 0, "a1", tokens.first)), grpc::StatusCode::INVALID_ARGUMENT);

  v1::JoinMatchResponse joined;
  EXPECT_EQ(code(Join(id, 1, "mallory", &joined)), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(code(Join(id, 5, "mallory", &joined)), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Join(id, 1, "   ", &joined)), grpc::StatusCode::INVALID_ARGUMENT);

  v1::CreateMatchResponse created;
  EXPECT_EQ(code(Create("connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                        [](v1::CreateMatchRequest& r) {
                          (*r.mutable_spec()->mutable_options())["width"] = "99";
                        })),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Create("chess", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created)),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Create("connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                        [](v1::CreateMatchRequest& r) {
                          for (int i = 0; i < 100; ++i) {
                            (*r.mutable_spec()->mutable_options())[absl::StrCat("k", i)] =
                                std::string(1, 'v');
                          }
                        })),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(
      code(Create("connect4", {v1::SEAT_KIND_HUMAN, static_cast<v1::SeatKind>(77)}, {}, &created)),
      grpc::StatusCode::INVALID_ARGUMENT)
      << "unknown enum value";
  EXPECT_EQ(code(Create("connect4", {v1::SEAT_KIND_HUMAN}, {}, &created)),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(
      code(Create("connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT}, {"", "godlike"}, &created)),
      grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(
      code(Create("connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                  [](v1::CreateMatchRequest& r) { r.mutable_time_control()->set_initial_ms(-5); })),
      grpc::StatusCode::INVALID_ARGUMENT);

  // A match still waiting for its second player takes no moves.
  ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created,
                     TakingSeat(0, "dave"))
                  .ok());
  EXPECT_EQ(code(Move(created.match().id(), 0, "a1", created.seat_token())),
            grpc::StatusCode::FAILED_PRECONDITION);

  // After the end, every move is refused.
  const std::vector<std::string> moves = {"a1", "b1", "a2", "b2", "a3"};
  for (size_t i = 0; i < moves.size(); ++i) {
    ASSERT_TRUE(Move(id, static_cast<int>(i), moves[i], i % 2 ? tokens.second : tokens.first).ok());
  }
  s = Move(id, 5, "c3", tokens.second);
  EXPECT_EQ(code(s), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("over"), std::string::npos) << s.error_message();
  // Nothing refused was stored.
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", id)), "5");
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", other)), "0");
}

TEST_F(LobbyTest, ConcurrentMovesForOnePlyStoreExactlyOne) {
  for (int round = 0; round < 10; ++round) {
    auto [id, tokens] = HumanMatch("connect4");
    // The same seat from two devices, each sending a different move for ply 0.
    const RaceCount race = Race({
        [&, id = id] { return Move(id, 0, "3", tokens.first); },
        [&, id = id] { return Move(id, 0, "5", tokens.first); },
    });
    EXPECT_EQ(race.ok, 1);
    EXPECT_EQ(race.refused, 1);
    EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", id)), "1");
    EXPECT_EQ(Get(id).moves_size(), 1);
  }
}

TEST_F(LobbyTest, WatcherResumesAfterTheLastPlyItSaw) {
  auto [id, tokens] = HumanMatch("connect4");
  const std::vector<std::string> moves = {"4", "4", "3", "5"};
  for (size_t i = 0; i < moves.size(); ++i) {
    ASSERT_TRUE(Move(id, static_cast<int>(i), moves[i], i % 2 ? tokens.second : tokens.first).ok());
  }
  Watch w(stub_.get(), id, /*after_ply=*/2);
  ASSERT_TRUE(w.WaitFor([](const auto& e) { return !e.empty() && e.back().has_resync(); },
                        absl::Seconds(5)));
  std::vector<v1::MatchEvent> events = w.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].move_applied().move().ply(), 3);
  EXPECT_EQ(events[0].move_applied().move().move(), "3");
  EXPECT_EQ(events[1].move_applied().move().ply(), 4);
  EXPECT_EQ(events[2].resync().moves_size(), 4);
  // Then live events.
  ASSERT_TRUE(Move(id, 4, "2", tokens.first).ok());
  ASSERT_TRUE(w.WaitFor([](const auto& e) { return e.size() == 4; }, absl::Seconds(5)));
  EXPECT_EQ(w.events()[3].move_applied().move().move(), "2");

  Watch bad(stub_.get(), id, /*after_ply=*/99);
  ASSERT_TRUE(bad.WaitDone(absl::Seconds(5)));
  EXPECT_EQ(bad.status().error_code(), grpc::StatusCode::OUT_OF_RANGE);
  Watch missing(stub_.get(), 424242);
  ASSERT_TRUE(missing.WaitDone(absl::Seconds(5)));
  EXPECT_EQ(missing.status().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(LobbyTest, ListsMatchesWithFiltersAndPages) {
  v1::CreateMatchResponse created;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &created).ok());
  }
  ASSERT_TRUE(
      Create("connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"beginner", "beginner"}, &created)
          .ok());
  auto list = [&](std::function<void(v1::ListMatchesRequest&)> f) {
    v1::ListMatchesRequest r;
    f(r);
    grpc::ClientContext c;
    v1::ListMatchesResponse out;
    EXPECT_TRUE(stub_->ListMatches(&c, r, &out).ok());
    return out;
  };
  v1::ListMatchesResponse open = list([](auto& r) { r.set_open_seats(true); });
  EXPECT_EQ(open.matches_size(), 5);
  v1::ListMatchesResponse bots = list([](auto& r) { r.set_bots_only(true); });
  ASSERT_EQ(bots.matches_size(), 1);
  EXPECT_EQ(bots.matches(0).spec().name(), "connect4");
  v1::ListMatchesResponse page1 = list([](auto& r) {
    r.set_game("tictactoe");
    r.set_page_size(3);
  });
  ASSERT_EQ(page1.matches_size(), 3);
  ASSERT_FALSE(page1.next_page_token().empty());
  v1::ListMatchesResponse page2 = list([&](auto& r) {
    r.set_game("tictactoe");
    r.set_page_size(3);
    r.set_page_token(page1.next_page_token());
  });
  ASSERT_EQ(page2.matches_size(), 2);
  EXPECT_LT(page2.matches(0).id(), page1.matches(2).id());
  EXPECT_EQ(list([](auto& r) { r.set_status(v1::MATCH_STATUS_WAITING); }).matches_size(), 5);
}

TEST_F(LobbyTest, SigkilledLobbyResumesEveryMatchFromTheDatabase) {
  // Two human matches part-way, two bot matches running, one person against a bot.
  std::vector<std::pair<int64_t, std::pair<std::string, std::string>>> humans;
  std::vector<int> acknowledged;
  for (int i = 0; i < 2; ++i) {
    humans.push_back(HumanMatch("connect4"));
    const std::vector<std::string> moves = {"1", "2", "1", "2"};
    int ply = 0;
    for (; ply < 2 + 2 * i; ++ply) {
      ASSERT_TRUE(Move(humans.back().first, ply, moves[ply],
                       ply % 2 ? humans.back().second.second : humans.back().second.first)
                      .ok());
    }
    acknowledged.push_back(ply);
  }
  std::vector<int64_t> bot_matches;
  for (int i = 0; i < 2; ++i) {
    v1::CreateMatchResponse created;
    ASSERT_TRUE(Create("connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"beginner", "easy"},
                       &created, [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(40); })
                    .ok());
    bot_matches.push_back(created.match().id());
  }
  v1::CreateMatchResponse vs_bot;
  ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_HUMAN}, {"medium", ""}, &vs_bot,
                     [](v1::CreateMatchRequest& r) {
                       r.set_take_seat(1);
                       r.set_display_name("erin");
                       r.set_bot_pacing_ms(0);
                     })
                  .ok());
  auto watch = std::make_unique<Watch>(stub_.get(), bot_matches[0]);
  // Let the bots get some moves in, then kill the lobby without warning.
  WaitMatch(bot_matches[0], [](const v1::Match& m) { return m.moves_size() >= 4; });
  ASSERT_TRUE(
      watch->WaitFor([](const auto& e) { return MovesSeen(e).size() >= 4; }, absl::Seconds(10)));
  lobby_->Signal(SIGKILL);
  ASSERT_TRUE(lobby_->WaitExit(absl::Seconds(5)).has_value());
  ASSERT_TRUE(watch->WaitDone(absl::Seconds(5)));
  const std::vector<std::string> seen_before = MovesSeen(watch->events());
  watch.reset();

  StartLobby();
  // Every acknowledged move is there.
  for (size_t i = 0; i < humans.size(); ++i) {
    EXPECT_EQ(Get(humans[i].first).moves_size(), acknowledged[i]);
  }
  // The watcher reconnects from the last ply it saw and gets the rest.
  Watch resumed(stub_.get(), bot_matches[0], static_cast<int>(seen_before.size()));
  // The human matches continue to their end: Red plays column 1 four times.
  for (size_t i = 0; i < humans.size(); ++i) {
    auto& [id, tokens] = humans[i];
    int ply = acknowledged[i];
    while (Get(id).status() == v1::MATCH_STATUS_ACTIVE) {
      const std::string move = ply % 2 ? "2" : "1";
      ASSERT_TRUE(Move(id, ply, move, ply % 2 ? tokens.second : tokens.first).ok());
      ++ply;
    }
    EXPECT_EQ(Get(id).result().winner(), 0);
  }
  // The person against the bot finishes too.
  v1::Match end = PlayAgainstBot(vs_bot.match().id(), vs_bot.seat_token(), 1);
  EXPECT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
  // The bot matches finish by themselves.
  for (int64_t id : bot_matches) {
    v1::Match m =
        WaitMatch(id, [](const v1::Match& m) { return m.status() == v1::MATCH_STATUS_FINISHED; });
    EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  }
  ASSERT_TRUE(resumed.WaitDone(absl::Seconds(30)));
  std::vector<std::string> all = seen_before;
  for (const std::string& m : MovesSeen(resumed.events())) all.push_back(m);
  std::vector<std::string> stored;
  const v1::Match final_match = Get(bot_matches[0]);
  for (const auto& m : final_match.moves()) stored.push_back(m.move());
  EXPECT_EQ(all, stored);
  EXPECT_TRUE(HasGameOver(resumed.events()));
}

TEST_F(LobbyTest, DatabaseOutageAnswersUnavailableThenPlayContinues) {
  auto [id, tokens] = HumanMatch("connect4");
  ASSERT_TRUE(Move(id, 0, "4", tokens.first).ok());
  v1::CreateMatchResponse bots;
  ASSERT_TRUE(Create("connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"beginner", "beginner"},
                     &bots, [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(50); })
                  .ok());
  ASSERT_TRUE(cluster_->StopServer().ok());
  grpc::Status s = Move(id, 1, "4", tokens.second);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  s = Move(id, 1, "4", tokens.second);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  ASSERT_TRUE(cluster_->StartServer().ok());
  // The lobby reconnects by itself; a client retries UNAVAILABLE.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  do {
    s = Move(id, 1, "4", tokens.second);
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE) break;
    absl::SleepFor(absl::Milliseconds(100));
  } while (absl::Now() < deadline);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(Move(id, 2, "3", tokens.first).ok());
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM moves WHERE match_id = ", id)), "3");
  // The bot match carries on to its end.
  v1::Match m = WaitMatch(bots.match().id(), [](const v1::Match& m) {
    return m.status() == v1::MATCH_STATUS_FINISHED;
  });
  EXPECT_EQ(m.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(lobby_->WaitExit(absl::Milliseconds(1)), std::nullopt) << "the lobby must not exit";
}

TEST_F(LobbyTest, DeadBotInstancesShowAsBotTroubleNotAHang) {
  // A lobby whose bot target has no server behind it.
  lobby_.reset();
  StartLobby(
      {absl::StrCat("--bot_target=127.0.0.1:", ::ply::testing::FreePort()), "--bot_give_up_s=2"});
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create("tictactoe", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_HUMAN}, {"easy", ""}, &created,
                     TakingSeat(1, "frank"))
                  .ok());
  Watch w(stub_.get(), created.match().id());
  ASSERT_TRUE(w.WaitDone(absl::Seconds(30)));
  bool trouble = false;
  for (const auto& e : w.events()) trouble |= e.has_bot_trouble();
  EXPECT_TRUE(trouble);
  v1::Match m = Get(created.match().id());
  EXPECT_EQ(m.result().reason(), v1::END_REASON_BOT_FAILURE);
  EXPECT_EQ(m.result().winner(), 1);
}

TEST(BotTargetsTest, ReadsInstanceLists) {
  EXPECT_EQ(lobby::TargetFromList("127.0.0.1:1\n# a comment\n127.0.0.1:2, 127.0.0.1:3\n"),
            "ipv4:127.0.0.1:1,127.0.0.1:2,127.0.0.1:3");
  EXPECT_EQ(lobby::TargetFromList("  \n# nothing\n"), "");
}

int64_t BotRequests(ServerProcess* bot) {
  auto stub = v1::BotService::NewStub(bot->channel());
  grpc::ClientContext context;
  v1::GetMetricsResponse metrics;
  EXPECT_TRUE(stub->GetMetrics(&context, v1::GetMetricsRequest(), &metrics).ok());
  return metrics.requests();
}

TEST_F(LobbyTest, TakesNewBotInstancesFromItsTargetFileWithoutARestart) {
  const std::string path = absl::StrCat("/tmp/ply-bots-", getpid(), ".txt");
  auto write = [&](ServerProcess* bot) {
    const std::string tmp = path + ".new";
    FILE* f = fopen(tmp.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fprintf(f, "%s\n", bot->address().c_str());
    fclose(f);
    // Renamed into place, so the lobby never reads half a file.
    ASSERT_EQ(rename(tmp.c_str(), path.c_str()), 0);
  };
  write(bots_[0]);
  lobby_.reset();
  StartLobby({absl::StrCat("--bot_target=file:", path)});
  auto play_bot_match = [&] {
    v1::CreateMatchResponse created;
    ASSERT_TRUE(
        Create("tictactoe", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT}, {"easy", "easy"}, &created)
            .ok());
    v1::Match end = WaitMatch(created.match().id(), [](const v1::Match& m) {
      return m.status() == v1::MATCH_STATUS_FINISHED;
    });
    EXPECT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
  };
  int64_t before = BotRequests(bots_[1]);
  play_bot_match();
  EXPECT_EQ(BotRequests(bots_[1]), before) << "bot 1 is not listed yet";
  write(bots_[1]);
  // The lobby re-reads the file every second: within a few matches bot 1 takes the requests.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (BotRequests(bots_[1]) == before && absl::Now() < deadline) play_bot_match();
  ASSERT_GT(BotRequests(bots_[1]), before);
  const int64_t before0 = BotRequests(bots_[0]);
  play_bot_match();
  EXPECT_EQ(BotRequests(bots_[0]), before0) << "bot 0 was removed from the list";
  unlink(path.c_str());
}

TEST_F(LobbyTest, AFloodingClientIsRefusedWithoutHurtingOthers) {
  lobby_.reset();
  // Dual-stack: this test's IPv4 calls and IPv6 calls count as two clients.
  // A slow refill keeps the count of refusals independent of how fast this machine makes calls.
  StartLobby({"--host=[::]", "--client_calls_per_s=1", "--client_burst=20", "--client_streams=2"});
  auto [id, tokens] = HumanMatch("tictactoe");
  int refused = 0;
  for (int i = 0; i < 100; ++i) {
    v1::GetMatchRequest request;
    request.set_match_id(id);
    grpc::ClientContext context;
    v1::Match m;
    grpc::Status s = stub_->GetMatch(&context, request, &m);
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++refused;
      EXPECT_NE(s.error_message().find("slow down"), std::string::npos);
    }
  }
  EXPECT_GT(refused, 50);
  // Another client (over IPv6) is served at once.
  auto other = v1::LobbyService::NewStub(grpc::CreateChannel(absl::StrCat("[::1]:", lobby_->port()),
                                                             grpc::InsecureChannelCredentials()));
  {
    v1::GetMatchRequest request;
    request.set_match_id(id);
    grpc::ClientContext context;
    v1::Match m;
    grpc::Status s = other->GetMatch(&context, request, &m);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  // Streams: two per client; the third is refused, the other client's are not.
  absl::SleepFor(absl::Seconds(2));  // the flooding client's bucket refills a little
  Watch w1(other.get(), id), w2(other.get(), id);
  // Both hold their slots (their snapshots arrived) before the third asks.
  for (Watch* w : {&w1, &w2}) {
    ASSERT_TRUE(w->WaitFor([](const auto& e) { return !e.empty(); }, absl::Seconds(10)));
  }
  Watch w3(other.get(), id);
  ASSERT_TRUE(w3.WaitDone(absl::Seconds(10)));
  EXPECT_EQ(w3.status().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  Watch mine(stub_.get(), id);
  ASSERT_TRUE(mine.WaitFor([](const auto& e) { return !e.empty(); }, absl::Seconds(5)));
  EXPECT_TRUE(mine.events()[0].has_snapshot());
}

TEST_F(LobbyTest, AWatcherThatCannotKeepUpIsDroppedAndOthersAreNot) {
  lobby_.reset();
  StartLobby({"--watcher_queue=2"});
  auto [id, tokens] = HumanMatch("gomoku", [](v1::CreateMatchRequest& r) {
    (*r.mutable_spec()->mutable_options())["size"] = "20";
  });
  // A watcher that never reads, on a connection with a small flow-control window (no window
  // growth): once the window is full its events pile up in the lobby's queue, and the lobby
  // drops it.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8192);
  auto slow = v1::LobbyService::NewStub(
      grpc::CreateCustomChannel(lobby_->address(), grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext stuck_context;
  stuck_context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  v1::WatchMatchRequest request;
  request.set_match_id(id);
  auto stuck = slow->WatchMatch(&stuck_context, request);
  Watch reader(stub_.get(), id);
  ASSERT_TRUE(reader.WaitFor([](const auto& e) { return !e.empty(); }, absl::Seconds(5)));
  // Moves that never make five (checked with the engine), each event about a kilobyte of board.
  auto game = CreateGame("gomoku", {{"size", "20"}});
  ASSERT_TRUE(game.ok());
  Rng rng(3);
  int ply = 0;
  for (; ply < 250; ++ply) {
    std::vector<std::string> legal = (*game)->LegalMoves();
    std::string move;
    for (int tries = 0; tries < 50 && move.empty(); ++tries) {
      const std::string m = legal[rng.Below(legal.size())];
      ASSERT_TRUE((*game)->Play(m).ok());
      if (!(*game)->Status().over) move = m;
      ASSERT_TRUE((*game)->Undo().ok());
    }
    if (move.empty()) break;
    ASSERT_TRUE((*game)->Play(move).ok());
    grpc::Status s = Move(id, ply, move, ply % 2 ? tokens.second : tokens.first);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  // The reading watcher saw every move, in order, although the other one stalled.
  // (Generous: under `make tsan` on a busy machine the 250 events take many seconds.)
  ASSERT_TRUE(reader.WaitFor([&](const auto& e) { return MovesSeen(e).size() == size_t(ply); },
                             absl::Seconds(60)));
  // The stuck one, read at last, ends with RESOURCE_EXHAUSTED after what it had been sent.
  v1::MatchEvent e;
  int read = 0;
  while (stuck->Read(&e)) ++read;
  grpc::Status end = stuck->Finish();
  EXPECT_EQ(end.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << end.error_message();
  EXPECT_LT(read, ply + 1);
  EXPECT_NE(end.error_message().find("after_ply"), std::string::npos) << end.error_message();
}

}  // namespace
}  // namespace ply

namespace ply::lobby {
namespace {

// The lobby in-process on the test's database: however many matches come and go, memory keeps
// only the bound of finished ones, and a forgotten match is loaded again when asked for.
TEST_F(LobbyTest, MatchCacheStaysWithinItsBound) {
  PostgresStore store({.url = url_});
  ASSERT_TRUE(store.Migrate().ok());
  Executor executor(2, 1000);
  Lobby lobby(&store, nullptr, &executor, LobbyOptions{.cache_size = 10});
  int64_t first = 0;
  for (int i = 0; i < 40; ++i) {
    v1::CreateMatchRequest create;
    create.mutable_spec()->set_name("tictactoe");
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.add_seats()->set_kind(v1::SEAT_KIND_HUMAN);
    create.set_take_seat(0);
    create.set_display_name("a");
    absl::StatusOr<v1::CreateMatchResponse> created = lobby.CreateMatch(create);
    ASSERT_TRUE(created.ok()) << created.status();
    const int64_t id = created->match().id();
    if (first == 0) first = id;
    v1::JoinMatchRequest join;
    join.set_match_id(id);
    join.set_seat(1);
    join.set_display_name("b");
    ASSERT_TRUE(lobby.JoinMatch(join).ok());
    absl::StatusOr<v1::Match> resigned = lobby.Resign(id, created->seat_token());
    ASSERT_TRUE(resigned.ok()) << resigned.status();
    ASSERT_EQ(resigned->status(), v1::MATCH_STATUS_FINISHED);
  }
  EXPECT_LE(lobby.CachedMatches(), 11u);
  absl::StatusOr<v1::Match> again = lobby.GetMatch(first);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(again->result().reason(), v1::END_REASON_RESIGNATION);
  lobby.Shutdown();
  executor.Stop();
}

}  // namespace
}  // namespace ply::lobby
