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
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client-cli/analysis_view.h"
#include "client-cli/render.h"
#include "client-cli/requests.h"
#include "client-cli/screen.h"
#include "client-cli/seat_store.h"
#include "client-cli/terminal.h"
#include "common/proto_convert.h"
#include "engine/core/options.h"
#include "engine/registry/registry.h"
#include "lobby-client/lobby_link.h"

namespace ply::client {
namespace {

struct Position {
  std::string name;  // golden file stem
  std::string game;
  std::string options;
  int plies;
  BoardOptions board = {};
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
    const std::string got = RenderBoard(*game, look, p.board);
    if (const char* update = std::getenv("PLY_UPDATE_GOLDEN"); update != nullptr) {
      std::ofstream(path, std::ios::binary) << got;
    }
    EXPECT_EQ(got, ReadFile(path)) << path << " (PLY_UPDATE_GOLDEN=1 rewrites it)";
    const bool as_is = !p.board.flip && !p.board.over;
    if (look == Look::kPlain) {
      // Plain is the game's own text (unless turned or over): ASCII, no escapes.
      if (as_is) {
        EXPECT_EQ(got, game->Render());
      }
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
                      Position{"morris", "morris", "", 8}, Position{"draughts", "draughts", "", 7},
                      // Black's player sees their men at the bottom.
                      Position{"draughts_for_black", "draughts", "", 7, {.flip = true}},
                      // Once a match is over nobody is to move, whatever the game's text says.
                      Position{"draughts_over", "draughts", "", 7, {.over = true}},
                      Position{"reversi_over", "reversi", "", 8, {.over = true}},
                      Position{"tictactwo_over", "tictactwo", "", 9, {.over = true}},
                      Position{"morris_over", "morris", "", 8, {.over = true}}),
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

TEST(MatchModelText, ASideAndItsPlayerTakeOneSetOfParentheses) {
  // "White (bot (easy) (1204)) to move." nested three deep.
  v1::Match m = ConnectFourMatch();
  m.mutable_seats(0)->set_rating(1500);
  m.mutable_seats(0)->set_provisional(true);
  m.mutable_seats(1)->set_difficulty("hard");
  m.mutable_seats(1)->set_rating(1850);
  MatchModel view;
  ASSERT_TRUE(view.Reset(m, absl::FromUnixSeconds(1000)).ok());
  EXPECT_EQ(view.SideAndPlayer(0), "Red (alice, 1500?)");
  EXPECT_EQ(view.SideAndPlayer(1), "Yellow (bot hard, 1850)");
  EXPECT_EQ(view.SideAndPlayer(0, "seat 1, "), "Red (seat 1, alice, 1500?)");
  m.mutable_seats(0)->set_rating_after(1662);
  ASSERT_TRUE(view.Reset(m, absl::FromUnixSeconds(1000)).ok());
  EXPECT_EQ(view.SideAndPlayer(0), "Red (alice, 1500 -> 1662, +162)");
}

TEST(Screen, AGuestIsMarkedSoThatNobodyPassesForAPlayer) {
  v1::Match m = ConnectFourMatch();
  m.mutable_seats(1)->set_kind(v1::SEAT_KIND_HUMAN);
  m.mutable_seats(1)->set_display_name("carol");
  MatchModel view;
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(view.Reset(m, t0).ok());
  ScreenOptions o;
  o.now = t0;
  // A spectator: alice and carol are guests.
  std::string screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("alice (guest)"), std::string::npos) << screen;
  EXPECT_NE(screen.find("carol (guest)"), std::string::npos) << screen;
  // alice logged in: a player, unmarked; and nobody is told they are a guest themselves.
  m.mutable_seats(0)->set_player("alice");
  ASSERT_TRUE(view.Reset(m, t0).ok());
  o.my_seat = 1;
  screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_EQ(screen.find("alice (guest)"), std::string::npos) << screen;
  EXPECT_NE(screen.find("carol (you)"), std::string::npos) << screen;
}

TEST(Screen, ShowsSeatsClocksLastMoveAndWhoseTurn) {
  MatchModel view;
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
  // The player sees the bot's move, not what its search made of the game.
  EXPECT_NE(screen.find("Last move: 2. Yellow 4\n"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("depth"), std::string::npos) << screen;
  EXPECT_NE(screen.find("Your move (Red)."), std::string::npos) << screen;
  EXPECT_EQ(lines.back(), "move> 3");
}

TEST(Screen, FollowsEventsToTheEnd) {
  MatchModel view;
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
  over.mutable_game_over()->add_ratings_after(1338);
  over.mutable_game_over()->add_ratings_after(1662);
  ASSERT_TRUE(view.Apply(over, absl::Now()).ok());
  // Where each rating went, for the final screen.
  EXPECT_EQ(view.match().seats(0).rating_after(), 1338);
  EXPECT_EQ(view.match().seats(1).rating_after(), 1662);
  o.my_seat = 0;
  screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("Game over: Red resigned; Yellow wins."), std::string::npos) << screen;
  EXPECT_NE(screen.find("You lost."), std::string::npos) << screen;
  // An aborted match (a side never moved) has no result: it read "It's a draw."
  v1::Match aborted = view.match();
  aborted.mutable_result()->set_winner(-1);
  aborted.mutable_result()->set_reason(v1::END_REASON_ABORTED);
  aborted.mutable_result()->set_text("");
  const std::vector<std::string> lines = GameOverLines(aborted, 0);
  EXPECT_EQ(lines[0], "Game over: no result.");
  EXPECT_EQ(lines[1], "No result.");
  EXPECT_NE(screen.find("ply record 42"), std::string::npos) << screen;
}

TEST(Screen, TakesTheLobbysClocksFromClockUpdates) {
  MatchModel view;
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
  MatchModel view;
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

TEST(GamesTable, ShowsEachLevelsRatingAndWhichOneItIs) {
  v1::ListGamesResponse games;
  v1::GameInfo* g = games.add_games();
  g->set_name("connect4");
  v1::DifficultyLevel* easy = g->add_levels();
  easy->set_name("easy");
  easy->set_rating(1158);
  easy->set_rating_source(v1::RATING_SOURCE_LADDER);
  v1::DifficultyLevel* hard = g->add_levels();
  hard->set_name("hard");
  hard->set_rating(1690);
  hard->set_rating_source(v1::RATING_SOURCE_LIVE);
  hard->set_rated_games(12);
  g->add_levels()->set_name("perfect");
  g->set_notation_hint("a column number, 1 from the left (e.g. 4).");
  v1::GameInfo* d = games.add_games();
  d->set_name("draughts");
  d->add_record_formats("pdn");
  const std::string fancy = GamesTable(games, Look::kFancy);
  // How to type a move, and the record formats where a game has some.
  EXPECT_NE(fancy.find("    moves: a column number, 1 from the left (e.g. 4).\n"),
            std::string::npos)
      << fancy;
  EXPECT_NE(fancy.find("    records: text, pdn (ply record MATCH --format pdn)\n"),
            std::string::npos)
      << fancy;
  EXPECT_EQ(fancy.find("records:"), fancy.rfind("records:")) << "connect4 has none: " << fancy;
  EXPECT_NE(fancy.find("bot levels: easy \u2248 1158, hard 1690 (12 rated games), perfect\n"),
            std::string::npos)
      << fancy;
  const std::string plain = GamesTable(games, Look::kPlain);
  EXPECT_NE(plain.find("easy ~1158,"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("\u2248"), std::string::npos) << "plain text stays ASCII";
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
  ASSERT_TRUE(store.Save("c:3,d:4", {.match_id = 9, .seat = 0, .token = "v9", .name = "bob"}).ok());
  auto t = store.Find("a:1", 7);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->seat, 1);
  EXPECT_EQ(t->token, "t7");
  EXPECT_EQ(store.Find("b:2", 7)->token, "u7");
  EXPECT_FALSE(store.Find("a:1", 8).has_value());
  // A lobby of several instances, named by any list that shares one of them.
  EXPECT_EQ(store.Find("c:3,d:4", 9)->token, "v9");
  EXPECT_EQ(store.Find("d:4", 9)->token, "v9");
  EXPECT_EQ(store.Find("d:4,e:5", 9)->token, "v9");
  EXPECT_FALSE(store.Find("e:5", 9).has_value());
  EXPECT_TRUE(store.Find("a:1,b:2", 7).has_value());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  ASSERT_EQ(stat(absl::StrCat(dir, "/ply").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700);
  std::filesystem::remove_all(dir);
}

TEST(Board, DraughtsTurnsRoundForBlacksPlayerOnly) {
  EXPECT_TRUE(FlipsFor("draughts", 0));
  EXPECT_FALSE(FlipsFor("draughts", 1));
  EXPECT_FALSE(FlipsFor("draughts", -1));
  EXPECT_FALSE(FlipsFor("connect4", 0));
  auto game = CreateGame("draughts", {});
  ASSERT_TRUE(game.ok());
  const std::string flipped = RenderBoard(**game, Look::kPlain, {.flip = true});
  std::vector<std::string> lines = absl::StrSplit(flipped, '\n');
  // Black's men (b) now at the bottom, White's (w) at the top, squares mirrored: 32 is top left.
  EXPECT_EQ(lines[0], "     w     w     w     w    29-32") << flipped;
  EXPECT_EQ(lines[3], " 20    19    18    17       17-20") << flipped;
  EXPECT_EQ(lines[7], "  b     b     b     b       1-4") << flipped;
  EXPECT_EQ(lines[8], "Black (b) to move; B and W are kings");
}

TEST(Board, AnEndedMatchHasNobodyToMove) {
  for (const std::string name : {"draughts", "reversi", "tictactwo", "morris"}) {
    auto game = CreateGame(name, {});
    ASSERT_TRUE(game.ok());
    ASSERT_TRUE((*game)->Play((*game)->LegalMoves()[0]).ok());
    for (Look look : {Look::kPlain, Look::kFancy}) {
      const std::string over = StripAnsi(RenderBoard(**game, look, {.over = true}));
      EXPECT_EQ(over.find("to move"), std::string::npos) << over;
      EXPECT_EQ(over.find("* "), std::string::npos) << over;
    }
    // What the game itself says (Morris marks the side to move with "* ").
    const std::string own = RenderBoard(**game, Look::kPlain);
    EXPECT_TRUE(own.find(" to move") != std::string::npos || own.find("* ") != std::string::npos)
        << own;
  }
}

TEST(Board, SidesDifferInShapeNotOnlyInColour) {
  for (const std::string name : {"connect4", "draughts", "reversi", "gomoku", "morris"}) {
    EXPECT_NE(StripAnsi(SideGlyph(name, 0, Look::kFancy)),
              StripAnsi(SideGlyph(name, 1, Look::kFancy)))
        << name;
  }
  // Bright white (97) vanishes on a light background.
  auto game = CreateGame("draughts", {});
  ASSERT_TRUE(game.ok());
  EXPECT_EQ(RenderBoard(**game, Look::kFancy).find("97"), std::string::npos);
}

v1::MoveRecord BotMove(int ply, int seat, const std::string& score, int depth, int64_t nodes) {
  v1::MoveRecord m;
  m.set_ply(ply);
  m.set_seat(seat);
  m.set_move("4");
  m.mutable_bot()->set_depth(depth);
  m.mutable_bot()->set_score_text(score);
  m.mutable_bot()->set_nodes(nodes);
  return m;
}

TEST(Thinking, ScoresAreFromTheFirstPlayersSide) {
  const v1::Match m = ConnectFourMatch();  // Red, then Yellow
  EXPECT_EQ(BotSummary(BotMove(1, 0, "+14", 5, 950), m), "depth 5, +14, 950 nodes");
  EXPECT_EQ(BotSummary(BotMove(2, 1, "+30", 5, 950), m), "depth 5, -30, 950 nodes");
  EXPECT_EQ(BotSummary(BotMove(2, 1, "-30", 5, 950), m), "depth 5, +30, 950 nodes");
  EXPECT_EQ(BotSummary(BotMove(2, 1, "0", 5, 950), m), "depth 5, 0, 950 nodes");
  EXPECT_EQ(BotSummary(BotMove(2, 1, "win in 3", 9, 70), m), "depth 9, Yellow wins in 3, 70 nodes");
  EXPECT_EQ(BotSummary(BotMove(1, 0, "loss in 4", 9, 70), m),
            "depth 9, Yellow wins in 4, 70 nodes");
  EXPECT_EQ(BotSummary(BotMove(1, 0, "draw", 9, 70), m), "depth 9, draw, 70 nodes");
  // A solver's proven margin names the side it favours too.
  EXPECT_EQ(BotSummary(BotMove(2, 1, "loss by 6", 20, 70), m), "depth 20, Red wins by 6, 70 nodes");
  // A level that plays at random sometimes searched nothing for that move.
  EXPECT_EQ(BotSummary(BotMove(2, 1, "0", 0, 0), m), "random move");
  // While a person plays, the lobby keeps the search hidden: that is not a random move (a hard
  // bot's moves read "random move" to its opponent and every spectator).
  v1::MoveRecord hidden = BotMove(2, 1, "", 0, 0);
  hidden.mutable_bot()->set_hidden(true);
  EXPECT_EQ(BotSummary(hidden, m), "its search is shown when the game ends");
  v1::MoveRecord person;
  person.set_ply(1);
  EXPECT_EQ(BotSummary(person, m), "");
  EXPECT_EQ(ScoreLegend(m), "Scores are from Red's side: + is good for Red, - for Yellow.");
  v1::Match people = m;
  for (v1::MoveRecord& mv : *people.mutable_moves()) mv.clear_bot();
  EXPECT_EQ(ScoreLegend(people), "");
}

TEST(Screen, APlayerSeesNoEngineVerdictUntilTheGameIsOver) {
  MatchModel view;
  ASSERT_TRUE(view.Reset(ConnectFourMatch(), absl::Now()).ok());
  ScreenOptions o;
  o.my_seat = 0;
  o.move_log = true;
  o.now = absl::Now();
  std::string screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_EQ(screen.find("depth"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("nodes"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("Scores are"), std::string::npos) << screen;
  // The recent moves are there, beside the last one.
  EXPECT_NE(screen.find("   1. Red    4"), std::string::npos) << screen;
  EXPECT_NE(screen.find("   2. Yellow 4"), std::string::npos) << screen;

  // A spectator sees it, with the legend.
  o.my_seat = -1;
  screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("Last move: 2. Yellow 4 (depth 14, -3, 1.23M nodes)"), std::string::npos)
      << screen;
  EXPECT_NE(screen.find("Scores are from Red's side"), std::string::npos) << screen;

  // And the player, once it is over.
  v1::MatchEvent over;
  over.mutable_game_over()->mutable_result()->set_winner(1);
  ASSERT_TRUE(view.Apply(over, absl::Now()).ok());
  o.my_seat = 0;
  screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("depth 14, -3, 1.23M nodes"), std::string::npos) << screen;
}

TEST(Screen, AnOpponentWhoLeftIsShownWithTheTimeLeftToAClaim) {
  // Alice (Red, to move) against Bob, untimed, with claims after 2 minutes; she left 40 s into
  // her turn.
  v1::Match m = ConnectFourMatch();
  m.clear_time_control();
  m.mutable_seats(1)->set_kind(v1::SEAT_KIND_HUMAN);
  m.mutable_seats(1)->set_display_name("bob");
  m.set_claim_after_ms(120000);
  const absl::Time turn = absl::FromUnixSeconds(1700000000);
  m.set_turn_started_ms(absl::ToUnixMillis(turn));
  MatchModel view;
  ASSERT_TRUE(view.Reset(m, turn).ok());
  v1::MatchEvent left;
  left.mutable_presence()->set_seat(0);
  left.mutable_presence()->set_present(false);
  left.mutable_presence()->set_name("alice");
  left.mutable_presence()->set_away_since_ms(absl::ToUnixMillis(turn + absl::Seconds(40)));
  ASSERT_TRUE(view.Apply(left, turn + absl::Seconds(41)).ok());
  ScreenOptions o;
  o.my_seat = 1;
  o.now = turn + absl::Seconds(80);
  std::string screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("alice left the game - you can claim the win in 1:20"), std::string::npos)
      << screen;
  o.now = turn + absl::Seconds(161);
  screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("alice left the game - you can claim the win now: type 'claim'"),
            std::string::npos)
      << screen;
  // A spectator hears who left, and nothing of claims.
  o.my_seat = -1;
  screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("alice left the game"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("claim"), std::string::npos) << screen;
  // With clocks, the clock settles it: no claim.
  o.my_seat = 1;
  v1::Match timed = view.match();
  timed.mutable_time_control()->set_initial_ms(300000);
  ASSERT_TRUE(view.Reset(timed, o.now).ok());
  screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("alice left the game"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("claim"), std::string::npos) << screen;
  // She is back: the line goes.
  v1::MatchEvent back;
  back.mutable_presence()->set_seat(0);
  back.mutable_presence()->set_present(true);
  ASSERT_TRUE(view.Apply(back, o.now).ok());
  screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_EQ(screen.find("left the game"), std::string::npos) << screen;
}

TEST(Screen, APlayersMoveLogShowsTheRecentMoves) {
  v1::Match m = ConnectFourMatch();
  m.clear_moves();
  for (int ply = 1; ply <= 14; ++ply) {
    v1::MoveRecord* mv = m.add_moves();
    mv->set_ply(ply);
    mv->set_seat((ply - 1) % 2);
    mv->set_move(absl::StrCat(ply % 7 == 0 ? 7 : ply % 7));
  }
  MatchModel view;
  ASSERT_TRUE(view.Reset(m, absl::Now()).ok());
  ScreenOptions o;
  o.my_seat = 0;
  o.move_log = true;
  o.now = absl::Now();
  const std::string screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_EQ(screen.find("   4. Yellow"), std::string::npos) << screen;
  EXPECT_NE(screen.find("   5. Red"), std::string::npos) << screen;
  EXPECT_NE(screen.find("  14. Yellow"), std::string::npos) << screen;
}

TEST(Screen, TheMoveLogGoesBesideTheBoardWhereThereIsRoom) {
  MatchModel view;
  ASSERT_TRUE(view.Reset(ConnectFourMatch(), absl::Now()).ok());
  ScreenOptions o;
  o.move_log = true;
  o.now = absl::Now();
  o.rows = 40;
  o.cols = 100;
  std::vector<std::string> lines = ComposeScreen(view, o);
  std::string screen = absl::StrJoin(lines, "\n");
  // The board's rows, each followed on its line by the log: the legend, then the moves.
  EXPECT_NE(screen.find(". . . . . . .    Scores are from Red's side"), std::string::npos)
      << screen;
  EXPECT_NE(screen.find(". . . . . . .       1. Red    4"), std::string::npos) << screen;
  EXPECT_NE(screen.find(". . . . . . .       2. Yellow 4       depth 14, -3, 1.23M nodes"),
            std::string::npos)
      << screen;
  const size_t beside = lines.size();

  // Too narrow: under the status, taking rows of its own.
  o.cols = 40;
  lines = ComposeScreen(view, o);
  screen = absl::StrJoin(lines, "\n");
  EXPECT_NE(screen.find("\nScores are from Red's side"), std::string::npos) << screen;
  EXPECT_NE(screen.find("\n   1. Red    4"), std::string::npos) << screen;
  EXPECT_EQ(lines.size(), beside + 4) << screen;

  // A short terminal keeps the newest moves.
  o.rows = lines.size() - 1;
  screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_EQ(screen.find("   1. Red"), std::string::npos) << screen;
  EXPECT_NE(screen.find("   2. Yellow"), std::string::npos) << screen;
}

TEST(Screen, ALowClockIsRedAndADrawOfferIsSaidOnce) {
  v1::Match m = ConnectFourMatch();
  m.set_draw_offer(0);
  MatchModel view;
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(view.Reset(m, t0).ok());
  ScreenOptions o;
  o.look = Look::kFancy;
  o.my_seat = 0;
  o.now = t0;
  const std::vector<std::string> lines = ComposeScreen(view, o);
  const std::string screen = absl::StrJoin(lines, "\n");
  // Yellow has 9.4 s: red. Red has 65 s: not.
  EXPECT_NE(screen.find("\x1b[1;31m0:09.4"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("\x1b[1;31m1:05"), std::string::npos) << screen;
  int offers = 0;
  for (const std::string& l : lines) offers += l.find("draw") != std::string::npos;
  EXPECT_EQ(offers, 1) << screen;
  EXPECT_NE(screen.find("You offered a draw; it stands until your opponent moves."),
            std::string::npos);
}

TEST(Screen, AnEndedDraughtsMatchSaysNobodyIsToMove) {
  v1::Match m;
  m.set_id(7);
  m.mutable_spec()->set_name("draughts");
  m.set_status(v1::MATCH_STATUS_ACTIVE);
  for (int i = 0; i < 2; ++i) {
    v1::Seat* s = m.add_seats();
    s->set_index(i);
    s->set_taken(true);
    s->set_display_name(i == 0 ? "ann" : "ben");
    s->set_side(i == 0 ? "Black" : "White");
  }
  m.set_to_move(0);
  m.set_draw_offer(0);
  MatchModel view;
  ASSERT_TRUE(view.Reset(m, absl::Now()).ok());
  v1::MatchEvent over;
  over.mutable_game_over()->mutable_result()->set_winner(1);
  over.mutable_game_over()->mutable_result()->set_text("Black resigned; White wins");
  ASSERT_TRUE(view.Apply(over, absl::Now()).ok());
  ScreenOptions o;
  o.my_seat = 0;
  o.now = absl::Now();
  const std::string screen = absl::StrJoin(ComposeScreen(view, o), "\n");
  EXPECT_NE(screen.find("Game over: Black resigned; White wins."), std::string::npos) << screen;
  EXPECT_EQ(screen.find("to move"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("draw"), std::string::npos) << screen;
  // Black's player: their men at the bottom.
  EXPECT_LT(screen.find("29-32"), screen.find("1-4")) << screen;
}

TEST(Moves, SortedAsPeopleReadThem) {
  EXPECT_EQ(SortedMoves({"4", "3", "5", "2", "6", "1", "7", "10"}),
            (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "10"}));
  EXPECT_EQ(SortedMoves({"b1", "a10", "a2", "pass"}),
            (std::vector<std::string>{"a2", "a10", "b1", "pass"}));
  EXPECT_EQ(SortedMoves({"22x15x6", "22x15", "9-13", "10-14"}),
            (std::vector<std::string>{"9-13", "10-14", "22x15", "22x15x6"}));
}

v1::MatchSummary Summary(int64_t id, bool open) {
  v1::MatchSummary m;
  m.set_id(id);
  m.mutable_spec()->set_name("connect4");
  m.set_status(open ? v1::MATCH_STATUS_WAITING : v1::MATCH_STATUS_ACTIVE);
  m.set_created_ms(1764608400000);  // 2025-12-01 17:00 UTC
  for (int i = 0; i < 2; ++i) {
    v1::Seat* s = m.add_seats();
    s->set_side(i == 0 ? "Red" : "Yellow");
    s->set_taken(!(open && i == 1));
    s->set_kind(v1::SEAT_KIND_HUMAN);
    s->set_display_name(i == 0 ? "alice" : "bob");
    // alice is a registered player; bob a guest (a name anyone may write).
    if (i == 0) s->set_player("alice");
  }
  return m;
}

TEST(Tables, ListHasDatesAMoreLineAndTheOpenFootnoteOnlyWhenItApplies) {
  v1::ListMatchesResponse list;
  *list.add_matches() = Summary(9, /*open=*/false);
  std::string text = MatchesTable(list, 20, absl::UTCTimeZone());
  EXPECT_NE(text.find("CREATED"), std::string::npos) << text;
  EXPECT_NE(text.find("2025-12-01 17:00"), std::string::npos) << text;
  EXPECT_EQ(text.find("(open)"), std::string::npos) << text;
  EXPECT_EQ(text.find("More"), std::string::npos) << text;

  EXPECT_NE(text.find("CLOCK"), std::string::npos) << text;
  EXPECT_NE(text.find("active    -  "), std::string::npos) << "no clocks: " << text;
  // A guest is marked, as on the board: a guest may call itself "alice" with an invisible mark.
  EXPECT_NE(text.find("Red: alice, Yellow: bob (guest)"), std::string::npos) << text;

  *list.add_matches() = Summary(8, /*open=*/true);
  // An open seat's clock is in the list, so nobody joins a 540 ms game unawares.
  list.mutable_matches(1)->mutable_time_control()->set_initial_ms(540);
  list.set_next_page_token("x");
  text = MatchesTable(list, 2, absl::UTCTimeZone());
  EXPECT_NE(text.find("Yellow: (open)"), std::string::npos) << text;
  EXPECT_NE(text.find("waiting   0.54s"), std::string::npos) << text;
  EXPECT_NE(text.find("(open): a seat anyone can take"), std::string::npos) << text;
  EXPECT_NE(text.find("More matches than these 2: `ply list --limit 10` shows more"),
            std::string::npos)
      << text;
  EXPECT_NE(MatchesTable(list, 200, absl::UTCTimeZone()).find("narrow the list"),
            std::string::npos);
}

TEST(Tables, TimeControlsReadAsTheClockFlagWritesThem) {
  v1::TimeControl tc;
  tc.set_initial_ms(300000);
  tc.set_increment_ms(3000);
  EXPECT_EQ(TimeControlText(tc), "5m+3s");
  tc.set_increment_ms(0);
  EXPECT_EQ(TimeControlText(tc), "5m");
  tc.set_initial_ms(86400000);
  tc.set_increment_ms(3600000);
  EXPECT_EQ(TimeControlText(tc), "24h+1h");
  tc.set_initial_ms(90000);
  tc.set_increment_ms(500);
  EXPECT_EQ(TimeControlText(tc), "90s+0.5s");
}

TEST(Tables, NamesThatWouldTakeOverTheTerminalArePrintedHarmless) {
  v1::ListMatchesResponse list;
  *list.add_matches() = Summary(9, /*open=*/false);
  // An escape sequence, a C1 control (CSI), a right-to-left override and a newline, as an
  // older lobby may have stored them.
  list.mutable_matches(0)->mutable_seats(0)->set_display_name(
      "a\x1b[2J\xc2\x9b"
      "31m\xe2\x80\xae"
      "b\nc");
  const std::string text = MatchesTable(list, 20, absl::UTCTimeZone());
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  EXPECT_EQ(text.find("\xe2\x80\xae"), std::string::npos) << text;
  const std::string mark = "\xEF\xBF\xBD";  // U+FFFD
  EXPECT_NE(text.find("a" + mark + "[2J" + mark + "31m" + mark + "b" + mark + "c"),
            std::string::npos)
      << text;
}

TEST(Tables, RecordHasDatesAndScoresWithTheirLegend) {
  v1::Match m = ConnectFourMatch();
  m.set_created_ms(1764608400000);
  m.mutable_moves(1)->set_time_ms(1764608460000);
  std::string error;
  const std::string text = RecordText(m, absl::UTCTimeZone(), &error);
  EXPECT_EQ(error, "");
  EXPECT_NE(text.find("Created 2025-12-01 17:00, last move 2025-12-01 17:01"), std::string::npos)
      << text;
  EXPECT_NE(text.find("1. 4 4"), std::string::npos) << text;
  EXPECT_NE(text.find("Scores are from Red's side"), std::string::npos) << text;
  EXPECT_NE(text.find("depth 14, -3, 1.23M nodes"), std::string::npos) << text;
  EXPECT_EQ(FormatDate(0, absl::UTCTimeZone()), "?");
}

TEST(Requests, SeatsAreCountedFromOne) {
  EXPECT_EQ(*ParseSeatFlag(""), -1);
  EXPECT_EQ(*ParseSeatFlag("1"), 0);
  EXPECT_EQ(*ParseSeatFlag("2"), 1);
  for (const std::string bad : {"0", "-1", "x"}) {
    absl::StatusOr<int> s = ParseSeatFlag(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find("counted from 1"), std::string::npos) << s.status();
  }
  v1::Match m = ConnectFourMatch();
  m.mutable_seats(0)->set_taken(false);
  EXPECT_TRUE(CheckSeat(m, 0).ok());
  EXPECT_EQ(CheckSeat(m, 2).message(), "match 42 has seats 1 to 2; there is no seat 3");
  EXPECT_EQ(CheckSeat(m, 1).message(), "seat 2 (Yellow) of match 42 is a bot's");
  m.mutable_seats(1)->set_kind(v1::SEAT_KIND_HUMAN);
  EXPECT_EQ(CheckSeat(m, 1).message(),
            "seat 2 (Yellow) of match 42 is already taken by bot (hard)");

  absl::StatusOr<NewMatch> n = NewMatchRequest({.args = {"connect4"}, .seat2 = "robot"});
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().message(), "--seat2 is 'robot': use me, open or bot:LEVEL");
  n = NewMatchRequest({.args = {"connect4", "width=8"}, .seat2 = "bot:hard", .name = "ann"});
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->mine, 0);
  EXPECT_EQ(n->request.take_seat(), 0);
  EXPECT_EQ(n->request.seats(1).difficulty(), "hard");
  EXPECT_EQ(n->request.spec().options().at("width"), "8");
}

TEST(Servers, AListOfInstancesIsOneLobby) {
  absl::StatusOr<LobbyTarget> one = ParseServers("lobby:50050");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->target, "lobby:50050");
  EXPECT_EQ(one->key, "lobby:50050");
  EXPECT_EQ(ParseServers("dns:///lobby:50050")->target, "dns:///lobby:50050");

  absl::StatusOr<LobbyTarget> two = ParseServers("127.0.0.2:7,127.0.0.1:5");
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->target, "ipv4:127.0.0.2:7,127.0.0.1:5");
  EXPECT_EQ(two->authority, "127.0.0.2:7");
  // The same lobby whichever order the list is in.
  EXPECT_EQ(two->key, "127.0.0.1:5,127.0.0.2:7");
  EXPECT_EQ(ParseServers("127.0.0.1:5, 127.0.0.2:7")->key, two->key);
  EXPECT_EQ(ParseServers("[::1]:5,[::1]:6")->target, "ipv6:[::1]:5,[::1]:6");
  EXPECT_EQ(ParseServers("localhost:5,127.0.0.1:6")->target.rfind("ipv4:127.0.0.1:5", 0), 0u);
  EXPECT_FALSE(ParseServers("127.0.0.1:5,nonsense").ok());
  EXPECT_FALSE(ParseServers("127.0.0.1:5,127.0.0.1:x").ok());
  EXPECT_FALSE(ParseServers(" ").ok());

  // Round robin, and UNAVAILABLE tried again.
  const std::string config = LobbyServiceConfig();
  EXPECT_NE(config.find("round_robin"), std::string::npos);
  EXPECT_NE(config.find("\"UNAVAILABLE\""), std::string::npos);
}

TEST(Analysis, ColumnsStayAlignedWithTheLongestScoreTexts) {
  v1::Match match;
  for (const char* side : {"Black", "White"}) match.add_seats()->set_side(side);
  v1::MatchAnalysis analysis;
  // The widest texts a score can have: a proven outcome at 100%, and an ordinary score.
  const std::pair<const char*, const char*> scores[] = {{"win (proven)", "loss (proven)"},
                                                        {"+12", "-3"}};
  int ply = 1;
  for (const auto& [before, after] : scores) {
    v1::MoveAnalysis* m = analysis.add_moves();
    m->set_ply(ply);
    m->set_seat(ply - 1);
    m->set_move("d3");
    m->set_best_move("c4");
    m->set_score_before_text(before);
    m->set_score_after_text(after);
    m->set_win_before(1.0);
    m->set_win_after(0.0);
    ++ply;
  }
  const std::string text = AnalysisText(match, analysis, Look::kPlain);
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  // The header's "after" and "best" columns start where every row's do.
  size_t header = 0;
  while (header < lines.size() && lines[header].find("before") == std::string::npos) ++header;
  ASSERT_LT(header + 2, lines.size()) << text;
  const size_t after_at = lines[header].find("after");
  const size_t best_at = lines[header].find("best");
  EXPECT_EQ(lines[header + 1].find("loss (proven)"), after_at) << text;
  EXPECT_EQ(lines[header + 1].find("c4"), best_at) << text;
  EXPECT_EQ(lines[header + 2].find("-3"), after_at) << text;
  EXPECT_EQ(lines[header + 2].find("c4"), best_at) << text;
}

TEST(Analysis, TheHeaderSaysWhatJudgedEachPosition) {
  v1::Match match;
  for (const char* side : {"Black", "White"}) match.add_seats()->set_side(side);
  v1::MatchAnalysis analysis;
  analysis.set_positions(60);
  analysis.set_budget_ms(30000);
  EXPECT_NE(AnalysisText(match, analysis, Look::kPlain).find("60 positions at 30000 ms each"),
            std::string::npos);
  analysis.set_max_depth(4);
  analysis.set_max_nodes(100000);
  EXPECT_NE(AnalysisText(match, analysis, Look::kPlain)
                .find("60 positions at 30000 ms, depth 4, 100000 nodes each"),
            std::string::npos)
      << AnalysisText(match, analysis, Look::kPlain);
}

TEST(Analysis, CountsUseTheRightForm) {
  v1::Match match;
  for (const char* side : {"Black", "White"}) match.add_seats()->set_side(side);
  v1::MatchAnalysis analysis;
  v1::PlayerAnalysis* p = analysis.add_players();
  p->set_seat(0);
  p->set_accuracy(41.25);
  p->set_moves(1);
  p->set_inaccuracies(1);
  p->set_mistakes(1);
  p->set_blunders(1);
  v1::PlayerAnalysis* q = analysis.add_players();
  q->set_seat(1);
  q->set_accuracy(100);
  q->set_moves(2);
  q->set_blunders(2);
  const std::string text = AnalysisText(match, analysis, Look::kPlain);
  EXPECT_NE(text.find("accuracy 41.2%, 1 move: 1 inaccuracy (?!), 1 mistake (?), 1 blunder (?\?)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2 moves: 0 inaccuracies (?!), 0 mistakes (?), 2 blunders (?\?)"),
            std::string::npos)
      << text;
  // A side that made no move (a match aborted at once) has no accuracy, not 0%.
  q->set_moves(0);
  q->set_blunders(0);
  q->set_accuracy(0);
  EXPECT_NE(AnalysisText(match, analysis, Look::kPlain).find("White (): no moves to judge"),
            std::string::npos)
      << AnalysisText(match, analysis, Look::kPlain);
}

}  // namespace
}  // namespace ply::client
