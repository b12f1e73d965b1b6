// The terminal client's pure parts: every game's board against golden files, plain and fancy
// (Unicode, colour, the last move highlighted); the match screen; the line editor; the seat store.
// PLY_UPDATE_GOLDEN=1 rewrites the golden files (review the diff before committing it).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "bot-service/proto_convert.h"
#include "client-cli/match_view.h"
#include "client-cli/render.h"
#include "client-cli/seat_store.h"
#include "client-cli/terminal.h"
#include "engine/core/options.h"
#include "engine/registry/registry.h"

namespace ply::client {
namespace {

struct Position {
  std::string name;  // golden file stem
  std::string game;
  std::string options;
  int plies;
};

// For test names and messages.
void PrintTo(const Position& p, std::ostream* os) { *os << p.name; }

// A few plies into each game (and two variants), chosen by a fixed rule from the legal moves, so
// that pieces of both sides are on the board and the last move has something to highlight.
std::unique_ptr<AnyGame> Play(const Position& p) {
  absl::StatusOr<GameOptions> options = ParseOptions(p.options);
  EXPECT_TRUE(options.ok());
  auto game = CreateGame(p.game, *options);
  EXPECT_TRUE(game.ok()) << game.status();
  for (int i = 0; i < p.plies && !(*game)->Status().over; ++i) {
    const std::vector<std::string> moves = (*game)->LegalMoves();
    EXPECT_TRUE((*game)->Play(moves[(i * 7 + 3) % moves.size()]).ok());
  }
  return *std::move(game);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class GoldenBoard : public ::testing::TestWithParam<Position> {};

TEST_P(GoldenBoard, MatchesTheGoldenFilesPlainAndFancy) {
  const Position& p = GetParam();
  std::unique_ptr<AnyGame> game = Play(p);
  for (Look look : {Look::kPlain, Look::kFancy}) {
    const std::string path = absl::StrCat(PLY_GOLDEN_DIR, "/", p.name,
                                          look == Look::kPlain ? ".plain.txt" : ".fancy.txt");
    const std::string got = RenderBoard(*game, look);
    if (const char* update = std::getenv("PLY_UPDATE_GOLDEN"); update != nullptr) {
      std::ofstream(path, std::ios::binary) << got;
    }
    EXPECT_EQ(got, ReadFile(path)) << path << " (PLY_UPDATE_GOLDEN=1 rewrites it)";
    if (look == Look::kPlain) {
      // Plain is the game's own text: ASCII, no escapes.
      EXPECT_EQ(got, game->Render());
      for (char c : got) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << p.name;
    } else {
      // Fancy draws the same board: same lines, and the last move highlighted.
      EXPECT_NE(got.find("\x1b[1;"), std::string::npos) << p.name;
      EXPECT_NE(got.find(";7m"), std::string::npos) << p.name << ": no highlight";
      const std::string own = game->Render();
      EXPECT_EQ(std::count(got.begin(), got.end(), '\n'), std::count(own.begin(), own.end(), '\n'));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryGame, GoldenBoard,
    ::testing::Values(Position{"connect4", "connect4", "", 7},
                      Position{"connect4_cylinder", "connect4", "width=8,cylinder=true", 5},
                      Position{"tictactoe", "tictactoe", "", 5},
                      Position{"tictactwo", "tictactwo", "", 9},
                      Position{"reversi", "reversi", "", 8},
                      Position{"reversi_walls", "reversi", "walls=a1+h8", 6},
                      Position{"gomoku", "gomoku", "size=9", 9},
                      Position{"morris", "morris", "", 8}, Position{"draughts", "draughts", "", 7}),
    [](const ::testing::TestParamInfo<Position>& info) { return info.param.name; });

TEST(ChooseLook, PlainWhenPipedOrNoColor) {
  EXPECT_EQ(ChooseLook(/*stdout_is_tty=*/true, nullptr), Look::kFancy);
  EXPECT_EQ(ChooseLook(/*stdout_is_tty=*/true, ""), Look::kFancy);
  EXPECT_EQ(ChooseLook(/*stdout_is_tty=*/true, "1"), Look::kPlain);
  EXPECT_EQ(ChooseLook(/*stdout_is_tty=*/false, nullptr), Look::kPlain);
}

v1::Match ConnectFourMatch() {
  v1::Match m;
  m.set_id(42);
  m.mutable_spec()->set_name("connect4");
  m.set_status(v1::MATCH_STATUS_ACTIVE);
  for (int i = 0; i < 2; ++i) {
    v1::Seat* s = m.add_seats();
    s->set_index(i);
    s->set_kind(i == 0 ? v1::SEAT_KIND_HUMAN : v1::SEAT_KIND_BOT);
    s->set_taken(true);
    s->set_display_name(i == 0 ? "alice" : "bot (hard)");
    s->set_side(i == 0 ? "Red" : "Yellow");
    s->set_clock_ms(i == 0 ? 65000 : 9400);
  }
  m.mutable_time_control()->set_initial_ms(300000);
  for (int ply = 1; ply <= 2; ++ply) {
    v1::MoveRecord* mv = m.add_moves();
    mv->set_ply(ply);
    mv->set_seat(ply - 1);
    mv->set_move("4");
  }
  m.mutable_moves(1)->mutable_bot()->set_depth(14);
  m.mutable_moves(1)->mutable_bot()->set_score_text("+3");
  m.mutable_moves(1)->mutable_bot()->set_nodes(1234567);
  m.set_to_move(0);
  m.set_draw_offer(-1);
  return m;
}

TEST(Screen, ShowsSeatsClocksLastMoveAndWhoseTurn) {
  MatchView view;
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(view.Reset(ConnectFourMatch(), t0).ok());
  ScreenOptions o;
  o.my_seat = 0;
  o.now = t0 + absl::Seconds(5);
  o.prompt = "move> 3";
  const std::vector<std::string> lines = ComposeScreen(view, o);
  const std::string screen = absl::StrJoin(lines, "\n");
  EXPECT_NE(screen.find("ply - Connect Four - match 42"), std::string::npos) << screen;
  // Red's clock runs (65 s - 5 s); Yellow's stands.
  EXPECT_NE(screen.find("> X Red     alice (you)  1:00"), std::string::npos) << screen;
  EXPECT_NE(screen.find("  O Yellow  bot (hard)   0:09.4"), std::string::npos) << screen;
  EXPECT_NE(screen.find("Last move: 2. Yellow 4 (depth 14, +3, 1.23M nodes)"), std::string::npos)
      << screen;
  EXPECT_NE(screen.find("Your move (Red)."), std::string::npos) << screen;
  EXPECT_EQ(lines.back(), "move> 3");
}

TEST(Screen, FollowsEventsToTheEnd) {
  MatchView view;
  ASSERT_TRUE(view.Reset(ConnectFourMatch(), absl::Now()).ok());
  v1::MatchEvent e;
  v1::MoveApplied* applied = e.mutable_move_applied();
  applied->mutable_move()->set_ply(3);
  applied->mutable_move()->set_seat(0);
  applied->mutable_move()->set_move("3");
  applied->set_to_move(1);
  ASSERT_TRUE(view.Apply(e, absl::Now()).ok());
  ASSERT_TRUE(view.Apply(e, absl::Now()).ok());  // a repeat is ignored
  EXPECT_EQ(view.plies(), 3);
  EXPECT_TRUE(view.BotToMove());
  ScreenOptions o;
  o.spinner = 1;
  o.now = absl::Now();
  std::string screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("Yellow: bot (hard) is thinking /"), std::string::npos) << screen;

  applied->mutable_move()->set_ply(5);  // a gap: the caller must reload
  EXPECT_FALSE(view.Apply(e, absl::Now()).ok());

  v1::MatchEvent over;
  over.mutable_game_over()->mutable_result()->set_winner(1);
  over.mutable_game_over()->mutable_result()->set_text("Red resigned; Yellow wins");
  ASSERT_TRUE(view.Apply(over, absl::Now()).ok());
  o.my_seat = 0;
  screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("Game over: Red resigned; Yellow wins."), std::string::npos) << screen;
  EXPECT_NE(screen.find("You lost."), std::string::npos) << screen;
  EXPECT_NE(screen.find("ply record 42"), std::string::npos) << screen;
}

TEST(Screen, TakesTheLobbysClocksFromClockUpdates) {
  MatchView view;
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(view.Reset(ConnectFourMatch(), t0).ok());
  v1::MatchEvent e;
  e.mutable_clock_update()->add_clocks_ms(30000);
  e.mutable_clock_update()->add_clocks_ms(9400);
  e.mutable_clock_update()->set_to_move(0);
  ASSERT_TRUE(view.Apply(e, t0 + absl::Seconds(2)).ok());
  // Red's clock is the lobby's 30 s, running from the update; Yellow's stands.
  EXPECT_EQ(view.ClockMs(0, t0 + absl::Seconds(3)), 29000);
  EXPECT_EQ(view.ClockMs(1, t0 + absl::Seconds(3)), 9400);
}

TEST(Screen, GameOverStopsTheClocksAtTheLobbysFinalReading) {
  MatchView view;
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(view.Reset(ConnectFourMatch(), t0).ok());
  v1::MatchEvent over;
  over.mutable_game_over()->mutable_result()->set_winner(1);
  over.mutable_game_over()->add_clocks_ms(0);
  over.mutable_game_over()->add_clocks_ms(9100);
  ASSERT_TRUE(view.Apply(over, t0 + absl::Seconds(1)).ok());
  // Whatever the local estimate was, and however late it is read, the lobby's clocks stand.
  EXPECT_EQ(view.ClockMs(0, t0 + absl::Seconds(30)), 0);
  EXPECT_EQ(view.ClockMs(1, t0 + absl::Seconds(30)), 9100);
}

TEST(Format, ClocksAndCounts) {
  EXPECT_EQ(FormatClock(65000), "1:05");
  EXPECT_EQ(FormatClock(9400), "0:09.4");
  EXPECT_EQ(FormatClock(3723000), "1:02:03");
  EXPECT_EQ(FormatClock(-5), "0:00.0");
  EXPECT_EQ(FormatCount(950), "950");
  EXPECT_EQ(FormatCount(35200), "35.2k");
  EXPECT_EQ(FormatCount(1200000), "1.20M");
}

TEST(LineEditor, EditsLinesAndSkipsEscapes) {
  LineEditor e;
  auto r = e.Feed("d3x\x7f\x1b[A\r");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].event, LineEditor::Event::kLine);
  EXPECT_EQ(r[0].line, "d3");
  r = e.Feed(
      "abc\x15"
      "4\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].line, "4");
  e.Feed("x");
  EXPECT_EQ(e.pending(), "x");
  EXPECT_TRUE(e.Feed("\x04").empty());  // Ctrl-D quits only on an empty line
  r = e.Feed("\x03");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].event, LineEditor::Event::kQuit);
}

TEST(SeatStore, KeepsTokensPerServerAndMatchReadableByTheOwnerOnly) {
  char dir[] = "/tmp/ply-seat-store-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = absl::StrCat(dir, "/ply/seats.json");
  SeatStore store(path);
  EXPECT_FALSE(store.Find("a:1", 7).has_value());
  ASSERT_TRUE(store.Save("a:1", {.match_id = 7, .seat = 1, .token = "t7", .name = "bob"}).ok());
  ASSERT_TRUE(store.Save("b:2", {.match_id = 7, .seat = 0, .token = "u7", .name = "bob"}).ok());
  auto t = store.Find("a:1", 7);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->seat, 1);
  EXPECT_EQ(t->token, "t7");
  EXPECT_EQ(store.Find("b:2", 7)->token, "u7");
  EXPECT_FALSE(store.Find("a:1", 8).has_value());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  ASSERT_EQ(stat(absl::StrCat(dir, "/ply").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ply::client
