// ply-lobby end to end with bots in its matches: a person against two levels, a bot answering
// draw offers, a bot's thinking hidden from everyone while a person plays it, and spectators of
// a bot game. Real PostgreSQL, ply-bot and ply-lobby processes (stack_helper.h's LobbyFixture).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/registry/registry.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/players_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::HasGameOver;
using ::ply::testing::MovesSeen;
using ::ply::testing::RaceCount;
using ::ply::testing::TakingSeat;
using ::ply::testing::Watch;

using LobbyTest = ::ply::testing::LobbyFixture;

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
      // Only that it declines: the bot's view of the person's game stays hidden.
      EXPECT_EQ(e.draw_declined().text(), "X (bot, hard) declines the draw");
    }
    m = WaitMatch(id, [](const v1::Match& m) { return m.draw_offer() < 0; });
    EXPECT_EQ(m.draw_offer(), -1) << "the offer is withdrawn";
    // The same position is not searched again for the same offer.
    grpc::Status again = offer(id, token);
    EXPECT_EQ(again.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << again.error_message();
    EXPECT_NE(again.error_message().find("offer again after a move"), std::string::npos)
        << again.error_message();
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
    // Marked hidden, so that clients do not read its empty search as a random move.
    return mv.has_bot() && mv.bot().hidden() && !mv.bot().instance().empty() &&
           mv.bot().pv_size() == 0 && mv.bot().score_text().empty() && mv.bot().depth() == 0 &&
           mv.bot().nodes() == 0;
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
  EXPECT_FALSE(after.moves(1).bot().hidden());
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

// The third hostile review filled the bots' places for people with one client's own untimed
// bot games, answered at once, until its timed game's bot was refused and ran out of time (an
// unrated end on demand). One client's bot moves are now asked a few at a time (here one),
// its timed games first, the others waiting in the lobby.
TEST_F(LobbyTest, OneClientsBotMovesAreAskedAFewAtATimeItsTimedGamesFirst) {
  lobby_.reset();
  StartLobby({"--client_bot_calls=1"});
  // Three matches of one client's against bot:hard (a search of a few hundred milliseconds):
  // two untimed, then one timed; the bot moves first.
  std::vector<int64_t> ids;
  std::vector<std::string> tokens;
  for (int i = 0; i < 3; ++i) {
    v1::CreateMatchResponse created;
    ASSERT_TRUE(Create("reversi", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_HUMAN}, {"hard", ""}, &created,
                       [i](v1::CreateMatchRequest& r) {
                         TakingSeat(1, "carol")(r);
                         if (i == 2) r.mutable_time_control()->set_initial_ms(300000);
                       })
                    .ok());
    ids.push_back(created.match().id());
    tokens.push_back(created.seat_token());
  }
  constexpr int64_t kCommitSlackMs = 50;
  // The bot moves at `index` of the three: when each call began (committed less the call's
  // time) and ended.
  struct Round {
    std::vector<int64_t> began = std::vector<int64_t>(3), ended = std::vector<int64_t>(3);
  };
  const auto bot_moves = [&](int index) {
    Round r;
    for (int i = 0; i < 3; ++i) {
      const v1::Match m = ::ply::testing::WaitMatch(
          stub_.get(), ids[i], [&](const v1::Match& m) { return m.moves_size() > index; });
      EXPECT_GT(m.moves_size(), index) << "bot " << i << " never moved";
      if (m.moves_size() <= index) return r;
      r.ended[i] = m.moves(index).time_ms();
      r.began[i] = r.ended[i] - m.moves(index).think_ms();
    }
    return r;
  };
  // One at a time, in that order: each call after the one before it was answered (less the
  // few milliseconds between an answer and its commit). Without the bound all three searched
  // at once.
  const auto one_at_a_time = [&](const Round& r) {
    EXPECT_GE(r.began[2], r.ended[0] - kCommitSlackMs) << "the timed bot asked beside another";
    EXPECT_GE(r.began[1], r.ended[2] - kCommitSlackMs)
        << "the timed game's bot waited behind an untimed one that asked after it";
  };
  one_at_a_time(bot_moves(0));
  // The person answers in all three at once: the same order again.
  for (int i = 0; i < 3; ++i) {
    const v1::Match m = Get(ids[i]);
    absl::StatusOr<std::unique_ptr<AnyGame>> g =
        ReplayGame("reversi", {}, std::vector<std::string>{m.moves(0).move()});
    ASSERT_TRUE(g.ok());
    ASSERT_TRUE(Move(ids[i], 1, (*g)->LegalMoves().front(), tokens[i]).ok());
  }
  one_at_a_time(bot_moves(2));

  // A bot whose whole clock is shorter than the wait: it does not run out of time while the
  // lobby holds its move back (the attack's end: "ran out of time (the bot service did not
  // answer in time)", unrated, whenever its client's other games kept the bots busy).
  v1::CreateMatchResponse slow, quick;
  ASSERT_TRUE(Create("reversi", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_HUMAN}, {"perfect", ""}, &slow,
                     TakingSeat(1, "carol"))
                  .ok());
  ASSERT_TRUE(Create("reversi", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_HUMAN}, {"hard", ""}, &quick,
                     [](v1::CreateMatchRequest& r) {
                       TakingSeat(1, "carol")(r);
                       r.set_casual(true);
                       r.mutable_time_control()->set_initial_ms(1000);
                     })
                  .ok());
  const v1::Match held = ::ply::testing::WaitMatch(
      stub_.get(), quick.match().id(),
      [](const v1::Match& m) {
        return m.moves_size() > 0 || m.status() == v1::MATCH_STATUS_FINISHED;
      },
      absl::Seconds(30));
  EXPECT_EQ(held.moves_size(), 1) << held.result().text();
  EXPECT_NE(held.result().reason(), v1::END_REASON_BOT_FAILURE) << held.result().text();
  const v1::Match searched = Get(slow.match().id());
  ASSERT_GT(searched.moves_size(), 0);
  EXPECT_GE(held.moves(0).time_ms() - held.moves(0).think_ms(),
            searched.moves(0).time_ms() - kCommitSlackMs)
      << "the timed bot did not wait for the other game's search";
}

TEST_F(LobbyTest, OneAddresssBotMovesAreAskedAFewAtATimeOverAllItsPlayers) {
  // The fourth hostile review: the bound was per client, and a player is a client of its own,
  // so one address with three more accounts (players are cheap) and its guest games had eight
  // moves asked at once, filled the bots, and voided its rated timed game again. Three clients
  // of one address here (two players and a guest), each within its own bound of two.
  lobby_.reset();
  StartLobby({"--client_bot_calls=2", "--network_bot_calls=1"});
  const std::string alice = ::ply::testing::Register(stub_.get(), "alice");
  const std::string bob = ::ply::testing::Register(stub_.get(), "bob");
  const auto bot_first = [](v1::CreateMatchRequest& r) {
    r.mutable_seats()->SwapElements(0, 1);
    r.set_take_seat(1);
    r.set_casual(true);
  };
  std::vector<int64_t> ids;
  for (const std::string& key : {alice, bob}) {
    v1::CreateMatchResponse created;
    ASSERT_TRUE(
        ::ply::testing::PlayerAgainstBot(stub_.get(), "reversi", key, "hard", &created, bot_first)
            .ok());
    ids.push_back(created.match().id());
  }
  v1::CreateMatchResponse guest;
  ASSERT_TRUE(Create("reversi", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_HUMAN}, {"hard", ""}, &guest,
                     TakingSeat(1, "carol"))
                  .ok());
  ids.push_back(guest.match().id());
  // When each bot's call began and ended, in the order they began: one at a time.
  std::vector<std::pair<int64_t, int64_t>> calls;
  for (int64_t id : ids) {
    const v1::Match m = ::ply::testing::WaitMatch(
        stub_.get(), id, [](const v1::Match& m) { return m.moves_size() > 0; });
    ASSERT_GT(m.moves_size(), 0) << "the bot of match " << id << " never moved";
    calls.emplace_back(m.moves(0).time_ms() - m.moves(0).think_ms(), m.moves(0).time_ms());
  }
  std::sort(calls.begin(), calls.end());
  constexpr int64_t kCommitSlackMs = 50;
  for (size_t i = 1; i < calls.size(); ++i) {
    EXPECT_GE(calls[i].first, calls[i - 1].second - kCommitSlackMs)
        << "call " << i << " was asked while call " << i - 1 << " searched";
  }
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

}  // namespace
}  // namespace ply
