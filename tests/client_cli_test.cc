// The terminal client `ply` end to end: the real binary in a pseudo-terminal (forkpty), against a
// real stack started here (a throwaway PostgreSQL cluster, two ply-bot processes, ply-lobby with
// bots moving at once). The tests read the screen the way a person would: the text of the latest
// frame (what follows the last cursor-home), and type keys into the terminal.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client-cli/render.h"
#include "client-cli/screen.h"
#include "engine/registry/registry.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/newcomer_rating.h"
#include "tests/postgres_helper.h"
#include "tests/process_helper.h"
#include "tests/pty_helper.h"
#include "tests/stack_helper.h"

extern char** environ;

namespace ply {
namespace {

using ::ply::testing::AfterFirstGameText;
using ::ply::testing::NewcomerText;
using ::ply::testing::PostgresCluster;
using ::ply::testing::ServerProcess;

using ::ply::testing::Count;
using ::ply::testing::HasBoard;
using ::ply::testing::kScreenTimeout;
using ::ply::testing::PtyProcess;

class ClientCliTest : public ::ply::testing::ClientFixture {};

TEST_F(ClientCliTest, HumanPlaysTicTacToeAgainstABeginnerBotToTheEnd) {
  auto alice = Ply("alice", {"new", "tictactoe", "--seat2", "bot:beginner"});
  ASSERT_TRUE(alice->WaitScreen({"Tic-Tac-Toe", "Your move (X)", "move> "})) << alice->Output();
  const int64_t id = LatestMatch();
  ASSERT_GT(id, 0);
  for (int turn = 0; turn < 5; ++turn) {
    v1::Match m = Get(id);
    if (m.status() == v1::MATCH_STATUS_FINISHED) break;
    ASSERT_EQ(m.to_move(), 0) << alice->Screen();
    ASSERT_GT(m.legal_moves_size(), 0);
    // The screen says it is our turn, after the bot's reply to our last move.
    ASSERT_TRUE(alice->WaitScreen({"Your move"})) << alice->Screen();
    alice->Type(m.legal_moves(0) + "\r");
    const std::string after_bot = absl::StrCat("Last move: ", m.moves_size() + 2, ".");
    ASSERT_TRUE(alice->WaitScreenAny({{after_bot, "Your move"}, {"Game over"}})) << alice->Screen();
    // While the game runs, the player does not see what the bot's search made of it, and sees
    // the moves so far.
    const std::string screen = alice->Screen();
    if (screen.find("Game over") == std::string::npos) {
      for (const char* verdict : {"depth", "nodes", "random move", "Scores are"}) {
        EXPECT_EQ(screen.find(verdict), std::string::npos) << screen;
      }
      EXPECT_NE(screen.find("   1. X "), std::string::npos) << screen;
    }
  }
  // The final screen stays until the player leaves.
  ASSERT_TRUE(alice->WaitScreen({"Game over", "q: quit"})) << alice->Screen();
  EXPECT_FALSE(alice->WaitExit(absl::Milliseconds(300)).has_value());
  alice->Type("q");
  ASSERT_EQ(alice->WaitExit(), 0) << alice->Output();
  const v1::Match end = Get(id);
  ASSERT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
  const std::string screen = alice->Screen();
  EXPECT_NE(screen.find("Game over: " + end.result().text()), std::string::npos) << screen;
  EXPECT_NE(screen.find(absl::StrCat("ply record ", id)), std::string::npos) << screen;
  EXPECT_TRUE(HasBoard(screen, Board(end))) << screen << "\nwant:\n" << Board(end);
  ASSERT_GE(end.moves_size(), 2);
  ASSERT_TRUE(end.moves(1).has_bot());
  // "depth 9, draw, 2.1k nodes", or "random move" at a beginner's level.
  const std::string thinking = client::BotSummary(end.moves(1), end);
  EXPECT_TRUE(thinking.find("depth ") == 0 || thinking == "random move") << thinking;
  // Now that it is over, the player sees it too.
  EXPECT_NE(screen.find(thinking), std::string::npos) << screen;

  // Afterwards: a watcher's screen lists what the bot's search saw for each of its moves, and
  // the record lists the moves.
  auto watcher = Ply("carol", {"watch", absl::StrCat(id)});
  ASSERT_TRUE(watcher->WaitScreen({"Game over", "q: quit"})) << watcher->Output();
  watcher->Type("q");
  ASSERT_EQ(watcher->WaitExit(), 0) << watcher->Output();
  EXPECT_NE(watcher->Screen().find(absl::StrCat("   2. O ", end.moves(1).move(), " ")),
            std::string::npos)
      << watcher->Screen();
  EXPECT_NE(watcher->Screen().find(thinking), std::string::npos) << watcher->Screen();
  auto record = Ply("carol", {"record", absl::StrCat(id)});
  ASSERT_EQ(record->WaitExit(), 0) << record->Output();
  EXPECT_NE(
      record->Output().find(absl::StrCat("1. ", end.moves(0).move(), " ", end.moves(1).move())),
      std::string::npos)
      << record->Output();
  EXPECT_NE(record->Output().find("Result: " + end.result().text()), std::string::npos);
  // A record format the game does not have: the error names the ones it has.
  auto [code, out] = Run("carol", {"record", absl::StrCat(id), "--format", "pdn"});
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("tictactoe has no record format 'pdn'; its formats: text"), std::string::npos)
      << out;
}

TEST_F(ClientCliTest, TwoPeoplePlayConnectFourToAWinWhileASpectatorWatches) {
  auto alice = Ply("alice", {"new", "connect4"});
  ASSERT_TRUE(alice->WaitScreen({"Waiting for an opponent", "ply join"})) << alice->Output();
  std::smatch found;
  const std::string waiting = alice->Screen();
  ASSERT_TRUE(std::regex_search(waiting, found, std::regex("ply join ([0-9]+)"))) << waiting;
  const std::string id = found[1];

  auto bob = Ply("bob", {"join", id});
  auto spectator = Ply("carol", {"watch", id});
  ASSERT_TRUE(alice->WaitScreen({"Your move (Red)", "Yellow  bob"})) << alice->Screen();
  ASSERT_TRUE(bob->WaitScreen({"Red: alice to move", "bob (you)"})) << bob->Screen();

  // Red stacks column 1, Yellow column 2: Red's fourth disc wins. Each player's screen turns to
  // "Your move" by itself when the other's move arrives.
  const std::vector<std::string> moves = {"1", "2", "1", "2", "1", "2", "1"};
  for (size_t i = 0; i < moves.size(); ++i) {
    PtyProcess* mover = i % 2 == 0 ? alice.get() : bob.get();
    ASSERT_TRUE(
        mover->WaitScreen({"Your move", i == 0 ? "move> " : absl::StrCat("Last move: ", i, ".")}))
        << "move " << i + 1 << ":\n"
        << mover->Screen();
    mover->Type(moves[i] + "\r");
  }
  for (PtyProcess* p : {alice.get(), bob.get(), spectator.get()}) {
    ASSERT_TRUE(p->WaitScreen({"Game over", "q: quit"})) << p->Screen();
    p->Type("q");
    ASSERT_EQ(p->WaitExit(), 0) << p->Output();
  }

  const v1::Match end = Get(std::stoll(id));
  ASSERT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
  EXPECT_EQ(end.result().winner(), 0);
  const std::string board = Board(end);
  for (PtyProcess* p : {alice.get(), bob.get(), spectator.get()}) {
    const std::string screen = p->Screen();
    EXPECT_TRUE(HasBoard(screen, board)) << screen << "\nwant:\n" << board;
    EXPECT_NE(screen.find("Game over: Red wins"), std::string::npos) << screen;
    EXPECT_NE(screen.find("Last move: 7. Red 1"), std::string::npos) << screen;
  }
  EXPECT_NE(alice->Screen().find("You won!"), std::string::npos) << alice->Screen();
  EXPECT_NE(bob->Screen().find("You lost."), std::string::npos) << bob->Screen();
}

TEST_F(ClientCliTest, AnOpponentWhoVanishesIsShownAndTheWinIsClaimedAfterTheBound) {
  // A lobby that lets a claim come 3 s into the missing side's turn and notices quickly.
  StartLobby({"--claim_after_s=3", "--presence_grace_s=0.3", "--presence_poll_s=0.1"});
  auto alice = Ply("alice", {"new", "connect4"});
  ASSERT_TRUE(alice->WaitScreen({"Waiting for an opponent", "ply join"})) << alice->Output();
  std::smatch found;
  const std::string waiting = alice->Screen();
  ASSERT_TRUE(std::regex_search(waiting, found, std::regex("ply join ([0-9]+)"))) << waiting;
  const std::string id = found[1];
  auto bob = Ply("bob", {"join", id});
  auto carol = Ply("carol", {"watch", id});
  ASSERT_TRUE(alice->WaitScreen({"Your move (Red)", "Yellow  bob"})) << alice->Screen();
  // Both sides make a first move (before that a missing side aborts the match instead).
  alice->Type("4\r");
  ASSERT_TRUE(bob->WaitScreen({"Your move (Yellow)"})) << bob->Screen();
  bob->Type("4\r");
  ASSERT_TRUE(alice->WaitScreen({"Your move (Red)", "Last move: 2."})) << alice->Screen();
  alice->Type("3\r");
  ASSERT_TRUE(bob->WaitScreen({"Your move (Yellow)", "Last move: 3."})) << bob->Screen();
  // Bob's client is killed on his move: Alice and the spectator are told.
  bob.reset();
  ASSERT_TRUE(alice->WaitScreen({"bob left the game - you can claim the win in"}))
      << alice->Screen();
  ASSERT_TRUE(carol->WaitScreen({"bob left the game"})) << carol->Screen();
  EXPECT_EQ(carol->Screen().find("claim"), std::string::npos) << carol->Screen();
  // Too early: refused, saying when.
  auto [code, out] = Run("alice", {"claim", id});
  if (alice->Screen().find("claim the win in") != std::string::npos) {
    EXPECT_EQ(code, 1) << out;
    EXPECT_NE(out.find("bob has been gone"), std::string::npos) << out;
    EXPECT_NE(out.find("you can claim after 3 s"), std::string::npos) << out;
  }
  // Once the bound has passed, the board says so and 'claim' takes the win.
  ASSERT_TRUE(alice->WaitScreen({"you can claim the win now: type 'claim'"})) << alice->Screen();
  alice->Type("claim\r");
  ASSERT_TRUE(alice->WaitScreen({"Game over: Yellow left the game; Red wins by claim", "You won"}))
      << alice->Screen();
  ASSERT_TRUE(carol->WaitScreen({"Game over: Yellow left the game"})) << carol->Screen();
  const v1::Match end = Get(std::stoll(id));
  EXPECT_EQ(end.result().winner(), 0);
  EXPECT_EQ(end.result().reason(), v1::END_REASON_ABANDONED);
}

TEST_F(ClientCliTest, ABadMoveIsExplainedAndTheGameGoesOnAndResumes) {
  auto alice = Ply("alice", {"new", "connect4", "--seat2", "bot:beginner"}, /*color=*/true);
  ASSERT_TRUE(alice->WaitScreen({"Your move (Red)"})) << alice->Output();
  const int64_t id = LatestMatch();

  alice->Type("9\r");
  ASSERT_TRUE(alice->WaitScreen({"'9' was not played: "})) << alice->Screen();
  {
    // The lobby's own sentence follows.
    const std::string screen = alice->Screen();
    const size_t at = screen.find("was not played: ");
    EXPECT_GT(screen.find('\n', at) - at, std::string("was not played: ").size() + 5) << screen;
  }
  alice->Type("banana\r");
  ASSERT_TRUE(alice->WaitScreen({"'banana' was not played: ", "Your move (Red)"}))
      << alice->Screen();
  EXPECT_EQ(Get(id).moves_size(), 0);

  // The game goes on: a good move is played and the bot answers.
  alice->Type("4\r");
  ASSERT_TRUE(alice->WaitScreen({"Last move: 2. Yellow", "Your move (Red)"})) << alice->Screen();
  EXPECT_EQ(alice->Screen().find("was not played"), std::string::npos) << alice->Screen();

  // quit leaves the seat; the token is kept (owner-only) and `ply join` resumes it.
  alice->Type("quit\r");
  ASSERT_EQ(alice->WaitExit(), 0) << alice->Output();
  EXPECT_NE(alice->Output().find(absl::StrCat("ply join ", id)), std::string::npos);
  struct stat st;
  ASSERT_EQ(stat((home_ + "/alice/ply/seats.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);

  auto again = Ply("alice", {"join", absl::StrCat(id)});
  ASSERT_TRUE(again->WaitScreen({"Your move (Red)", "alice (you)", "Last move: 2."}))
      << again->Output();
  again->Type("\x03");
  ASSERT_EQ(again->WaitExit(), 0);

  // A script plays one move with the stored token.
  auto script = Ply("alice", {"move", absl::StrCat(id), "4"});
  ASSERT_EQ(script->WaitExit(), 0) << script->Output();
  EXPECT_NE(script->Output().find("Played 4 (move 3)"), std::string::npos) << script->Output();
  auto stranger = Ply("mallory", {"move", absl::StrCat(id), "4"});
  EXPECT_EQ(stranger->WaitExit(), 1);
  EXPECT_NE(stranger->Output().find("you hold no seat"), std::string::npos) << stranger->Output();
}

TEST_F(ClientCliTest, APlayerSeesTheConnectionDropAndComeBackWithTheMovesItMissed) {
  auto alice = Ply("alice", {"new", "connect4"});
  ASSERT_TRUE(alice->WaitScreen({"Waiting for an opponent"})) << alice->Output();
  const std::string id = absl::StrCat(LatestMatch());
  // Bob plays from a script: join (the token is stored), then single moves.
  auto bob_join = Ply("bob", {"join", id, "--json"});
  ASSERT_EQ(bob_join->WaitExit(), 0) << bob_join->Output();
  ASSERT_TRUE(alice->WaitScreen({"Your move (Red)"})) << alice->Screen();
  alice->Type("4\r");
  ASSERT_TRUE(alice->WaitScreen({"Last move: 1. Red 4"})) << alice->Screen();

  const int port = lobby_->port();
  lobby_->Signal(SIGKILL);
  ASSERT_TRUE(lobby_->WaitExit(absl::Seconds(10)).has_value());
  ASSERT_TRUE(alice->WaitScreen({"Connection to the lobby lost", "retrying in"}))
      << alice->Screen();

  // A new lobby on the same address resumes the match from the database.
  StartLobby({absl::StrCat("--port=", port)});
  auto bob_move = Ply("bob", {"move", id, "3"});
  ASSERT_EQ(bob_move->WaitExit(), 0) << bob_move->Output();
  ASSERT_TRUE(
      alice->WaitScreen({"Reconnected to the lobby.", "Last move: 2. Yellow 3", "Your move (Red)"}))
      << alice->Screen();
  alice->Type("4\r");
  ASSERT_TRUE(alice->WaitScreen({"Last move: 3. Red 4"})) << alice->Screen();
  EXPECT_EQ(Get(std::stoll(id)).moves_size(), 3);
}

TEST_F(ClientCliTest, HelpComesForEveryWayOfAskingForIt) {
  // `ply --help`, `ply -h` and `ply new --help` used to print absl's "No flags matched" or
  // "Unknown command line flag 'h'".
  for (const std::vector<std::string>& asked :
       {std::vector<std::string>{"--help"}, {"-h"}, {"help"}}) {
    auto [code, out] = Run("alice", asked);
    EXPECT_EQ(code, 0) << asked[0];
    EXPECT_NE(out.find("Commands:"), std::string::npos) << asked[0] << ": " << out;
  }
  for (const std::vector<std::string>& asked : {std::vector<std::string>{"new", "--help"},
                                                {"new", "-h"},
                                                {"--help", "new"},
                                                {"help", "new"}}) {
    auto [code, out] = Run("alice", asked);
    EXPECT_EQ(code, 0) << asked[0] << " " << asked[1];
    EXPECT_NE(out.find("ply new GAME"), std::string::npos) << out;
    EXPECT_EQ(out.find("Commands:"), std::string::npos) << "one command's help: " << out;
  }
  auto [code, out] = Run("alice", {"nosuch", "--help"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find("no command 'nosuch'"), std::string::npos) << out;
  // Every flag, listed under its file as the source tree names it, not the builder's path.
  std::tie(code, out) = Run("alice", {"--helpfull"});
  EXPECT_NE(out.find("Flags from client-cli/main.cc:"), std::string::npos) << out;
  EXPECT_NE(out.find("--server"), std::string::npos) << out;
  for (size_t at = out.find("Flags from "); at != std::string::npos;
       at = out.find("Flags from ", at + 1)) {
    const std::string file = out.substr(at + 11, out.find(':', at) - at - 11);
    EXPECT_TRUE(file.rfind("client-cli/", 0) == 0 || file.rfind("absl/", 0) == 0 ||
                file.rfind("lobby-client/", 0) == 0 || file.rfind("common/", 0) == 0)
        << file;
  }
}

TEST_F(ClientCliTest, ListsRefuseACountBelowOneAndAGameThatIsNot) {
  // --limit 0 listed one match and hinted --limit 5; --game chess said "No matches".
  auto [code, out] = Run("alice", {"list", "--limit", "0"});
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("--limit is a count of at least 1"), std::string::npos) << out;
  std::tie(code, out) = Run("alice", {"list", "--game", "chess"});
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("no game 'chess'; the games: connect4"), std::string::npos) << out;
  std::tie(code, out) = Run("alice", {"list", "--game", "reversi", "--limit", "3"});
  EXPECT_EQ(code, 0) << out;
}

TEST_F(ClientCliTest, SeatNumbersCountFromOneEverywhere) {
  auto [code, out] = Run("alice", {"join", "1", "--seat", "0"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find("seats are counted from 1 (--seat 1 or --seat 2)"), std::string::npos) << out;
  std::tie(code, out) = Run("alice", {"help", "join"});
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("--seat 1 is the first player's, --seat 2 the second's"), std::string::npos)
      << out;

  std::tie(code, out) = Run("alice", {"new", "connect4", "--detach"});
  ASSERT_EQ(code, 0) << out;
  const std::string id = std::string(absl::StripAsciiWhitespace(out));
  std::tie(code, out) = Run("bob", {"join", id, "--seat", "3"});
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find(absl::StrCat("match ", id, " has seats 1 to 2; there is no seat 3")),
            std::string::npos)
      << out;
  std::tie(code, out) = Run("bob", {"join", id, "--seat", "1"});
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find(absl::StrCat("seat 1 (Red) of match ", id, " is already taken by alice")),
            std::string::npos)
      << out;
  std::tie(code, out) = Run("bob", {"join", id, "--seat", "2", "--json"});
  ASSERT_EQ(code, 0) << out;

  // Yellow is --seat 2, and said so.
  std::tie(code, out) = Run("bob", {"move", id, "4"});
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("not your turn: Red (seat 1, alice) is to move"), std::string::npos) << out;

  // A match that does not exist is what is wrong, not the seat.
  std::tie(code, out) = Run("bob", {"move", "999", "4"});
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("there is no match 999"), std::string::npos) << out;
  EXPECT_EQ(out.find("ply join 999"), std::string::npos) << out;
}

TEST_F(ClientCliTest, AnUnreachableLobbyIsReportedAtOnceByWatchAndJoin) {
  // A seat kept for a lobby that is not there: `join` resumes straight into the session.
  std::filesystem::create_directories(home_ + "/dave/ply");
  std::ofstream(home_ + "/dave/ply/seats.json")
      << R"({"127.0.0.1:1": {"5": {"seat": 0, "token": "t", "name": "dave"}}})";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"watch", "1", "--server", "127.0.0.1:1"},
        std::vector<std::string>{"join", "5", "--server", "127.0.0.1:1"}}) {
    const absl::Time start = absl::Now();
    auto p = Ply("dave", args);
    EXPECT_EQ(p->WaitExit(absl::Seconds(20)), 1) << args[0] << ": " << p->Output();
    EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << args[0];
    EXPECT_NE(p->Output().find("nothing is listening at 127.0.0.1:1 (connection refused)"),
              std::string::npos)
        << p->Output();
    EXPECT_EQ(p->Output().find("ipv4:"), std::string::npos) << "no gRPC internals: " << p->Output();
    EXPECT_EQ(p->Output().find("retrying"), std::string::npos) << p->Output();
  }
}

TEST_F(ClientCliTest, ALobbyListWithADeadAddressWorksInEitherOrder) {
  const std::string live = lobby_->address();
  const std::string dead_first = absl::StrCat("--server=127.0.0.1:1,", live);
  const std::string dead_last = absl::StrCat("--server=", live, ",127.0.0.1:1");

  // Play a move against a bot through one order; the seat is found through the other.
  auto alice = Ply("alice", {"new", "connect4", "--seat2", "bot:beginner", dead_first});
  ASSERT_TRUE(alice->WaitScreen({"Your move (Red)"})) << alice->Output();
  alice->Type("4\r");
  ASSERT_TRUE(alice->WaitScreen({"Last move: 2. Yellow", "Your move (Red)"})) << alice->Screen();
  alice->Type("quit\r");
  ASSERT_EQ(alice->WaitExit(), 0) << alice->Output();
  const std::string id = absl::StrCat(LatestMatch());
  auto [code, out] = Run("alice", {"move", id, "4", dead_last});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("Played 4 (move 3)"), std::string::npos) << out;

  for (const std::string& server : {dead_first, dead_last}) {
    std::tie(code, out) = Run("carol", {"new", "tictactoe", "--seat1", "bot:beginner", "--seat2",
                                        "bot:beginner", "--pacing_ms=0", "--detach", server});
    ASSERT_EQ(code, 0) << out;
    const std::string bots = std::string(absl::StripAsciiWhitespace(out));
    auto watcher = Ply("carol", {"watch", bots, server});
    ASSERT_TRUE(watcher->WaitScreen({"Game over", "q: quit"})) << watcher->Output();
    watcher->Type("q");
    ASSERT_EQ(watcher->WaitExit(), 0) << watcher->Output();
    std::tie(code, out) = Run("carol", {"record", bots, server});
    ASSERT_EQ(code, 0) << out;
    EXPECT_NE(out.find("Result: "), std::string::npos) << out;
    std::tie(code, out) = Run("carol", {"list", "--limit", "1", server});
    ASSERT_EQ(code, 0) << out;
    EXPECT_NE(out.find(absl::StrCat("\n", std::string(6 - bots.size(), ' '), bots, "  tictactoe")),
              std::string::npos)
        << out;
    // More than one match exists, so there is a next page; no seat of this one is open.
    EXPECT_NE(out.find("More matches than these 1: `ply list --limit 5`"), std::string::npos)
        << out;
    EXPECT_EQ(out.find("(open)"), std::string::npos) << out;
  }
}

TEST_F(ClientCliTest, AWatcherMovesToALiveInstanceAndSeesEachMoveOnce) {
  auto [code, out] = Run("alice", {"new", "connect4", "--detach"});
  ASSERT_EQ(code, 0) << out;
  const std::string id = std::string(absl::StripAsciiWhitespace(out));
  std::tie(code, out) = Run("bob", {"join", id, "--json"});
  ASSERT_EQ(code, 0) << out;
  std::tie(code, out) = Run("alice", {"move", id, "4"});
  ASSERT_EQ(code, 0) << out;

  // A second instance of the lobby on the same database.
  auto second = ServerProcess::Start(
      PLY_LOBBY_BINARY, {"--port=0", "--host=127.0.0.1", absl::StrCat("--database_url=", url_),
                         BotTargetFlag(), "--bot_pacing_ms=0"});
  ASSERT_TRUE(second.ok()) << second.status();
  const std::string both = absl::StrCat("--server=", lobby_->address(), ",", (*second)->address());
  auto watcher = Ply("carol", {"watch", id, "--json", both});
  ASSERT_TRUE(watcher->WaitScreen({"\"snapshot\""})) << watcher->Output();

  // The first instance goes; the moves are made on the second.
  lobby_->Signal(SIGKILL);
  ASSERT_TRUE(lobby_->WaitExit(absl::Seconds(10)).has_value());
  std::tie(code, out) = Run("bob", {"move", id, "3", both});
  ASSERT_EQ(code, 0) << out;
  std::tie(code, out) = Run("alice", {"move", id, "4", both});
  ASSERT_EQ(code, 0) << out;
  ASSERT_TRUE(watcher->WaitScreen({"\"ply\":3"})) << watcher->Output();
  watcher->Pump(absl::Milliseconds(500));

  // One event per line: the snapshot had move 1; moves 2 and 3 came once each.
  int snapshot_moves = -1;
  std::vector<int> applied;
  for (absl::string_view line : absl::StrSplit(watcher->Output(), '\n')) {
    const nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_object()) continue;
    if (event.contains("snapshot")) snapshot_moves = event["snapshot"]["moves"].size();
    if (event.contains("move_applied")) {
      applied.push_back(event["move_applied"]["move"]["ply"].get<int>());
    }
  }
  EXPECT_EQ(snapshot_moves, 1) << watcher->Output();
  EXPECT_EQ(applied, (std::vector<int>{2, 3})) << watcher->Output();
}

TEST_F(ClientCliTest, DraughtsFromBlacksSideWithNotesThatGoWithTheirState) {
  auto alice = Ply("alice", {"new", "draughts", "--bell_after=1s"});
  ASSERT_TRUE(alice->WaitScreen({"Waiting for an opponent"})) << alice->Output();
  const std::string id = absl::StrCat(LatestMatch());
  auto [code, out] = Run("bob", {"join", id, "--json"});
  ASSERT_EQ(code, 0) << out;
  ASSERT_TRUE(alice->WaitScreen({"Your move (Black)"})) << alice->Screen();
  {
    // Black's men at the bottom: the rows run from 29-32 down to 1-4.
    const std::string screen = alice->Screen();
    ASSERT_NE(screen.find("1-4"), std::string::npos) << screen;
    EXPECT_LT(screen.find("29-32"), screen.find("1-4")) << screen;
  }

  // A draw offer is said once.
  alice->Type("draw\r");
  ASSERT_TRUE(alice->WaitScreen({"You offered a draw; it stands until your opponent moves."}))
      << alice->Screen();
  EXPECT_EQ(Count(alice->Screen(), "offered a draw"), 1u) << alice->Screen();

  // Sorted legal moves.
  alice->Type("moves\r");
  const v1::Match start = Get(std::stoll(id));
  std::vector<std::string> legal(start.legal_moves().begin(), start.legal_moves().end());
  ASSERT_TRUE(alice->WaitScreen(
      {absl::StrCat("Legal moves: ", absl::StrJoin(client::SortedMoves(legal), " "))}))
      << alice->Screen();

  // Out of turn, said with the opponent's side and name; the note goes when the turn comes.
  const std::string first = start.legal_moves(0);
  alice->Type(first + "\r");
  ASSERT_TRUE(alice->WaitScreen({"White: bob to move"})) << alice->Screen();
  alice->Type(first + "\r");
  ASSERT_TRUE(alice->WaitScreen(
      {absl::StrCat("'", first, "' was not played: it is not your turn; White (bob) is to move.")}))
      << alice->Screen();
  absl::SleepFor(absl::Milliseconds(1200));
  const size_t bells_before = Count(alice->Raw(), "\a");
  const v1::Match after_first = Get(std::stoll(id));
  std::tie(code, out) = Run("bob", {"move", id, after_first.legal_moves(0)});
  ASSERT_EQ(code, 0) << out;
  ASSERT_TRUE(alice->WaitScreen({"Your move (Black)", "Last move: 2."})) << alice->Screen();
  EXPECT_EQ(alice->Screen().find("was not played"), std::string::npos) << alice->Screen();
  EXPECT_EQ(alice->Screen().find("offered a draw"), std::string::npos) << alice->Screen();
  // The opponent took more than --bell_after: the bell rang.
  alice->Pump(absl::Milliseconds(200));
  EXPECT_GT(Count(alice->Raw(), "\a"), bells_before);

  // A resized terminal is cleared and drawn whole.
  const size_t clears = Count(alice->Raw(), "\x1b[2J");
  alice->Resize(45, 100);
  alice->Pump(absl::Milliseconds(1500));
  EXPECT_GT(Count(alice->Raw(), "\x1b[2J"), clears);
  EXPECT_NE(alice->Screen().find("Your move (Black)"), std::string::npos) << alice->Screen();

  // Resigning asks first.
  alice->Type("resign\r");
  ASSERT_TRUE(alice->WaitScreen({"Type 'yes' to resign"})) << alice->Screen();
  alice->Type("no\r");
  ASSERT_TRUE(alice->WaitScreen({"You did not resign; the game goes on."})) << alice->Screen();
  EXPECT_EQ(Get(std::stoll(id)).status(), v1::MATCH_STATUS_ACTIVE);
  alice->Type("resign\r");
  ASSERT_TRUE(alice->WaitScreen({"Type 'yes' to resign"})) << alice->Screen();
  alice->Type("yes\r");
  ASSERT_TRUE(alice->WaitScreen({"Game over", "You lost.", "q: quit"})) << alice->Screen();
  // Nobody is to move in a match that is over.
  EXPECT_EQ(alice->Screen().find("to move"), std::string::npos) << alice->Screen();
  alice->Type("q");
  ASSERT_EQ(alice->WaitExit(), 0) << alice->Output();

  // The records carry dates.
  std::tie(code, out) = Run("carol", {"record", id, "--format", "pdn"});
  ASSERT_EQ(code, 0) << out;
  const std::string year = absl::FormatTime("%Y", absl::Now(), absl::UTCTimeZone());
  EXPECT_NE(out.find(absl::StrCat("[Date \"", year, ".")), std::string::npos) << out;
  // The registry wrote it from the match: the players by seat, the resignation's result, the
  // moves; and formats draughts lacks are named with the ones it has.
  EXPECT_NE(out.find("[Black \"alice\"]"), std::string::npos) << out;
  EXPECT_NE(out.find("[Result \"0-1\"]"), std::string::npos) << out;
  EXPECT_NE(out.find(absl::StrCat("1. ", Get(std::stoll(id)).moves(0).move())), std::string::npos)
      << out;
  std::tie(code, out) = Run("carol", {"record", id, "--format", "sgf"});
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("draughts has no record format 'sgf'; its formats: text, pdn"),
            std::string::npos)
      << out;
  std::tie(code, out) = Run("carol", {"record", id});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find(absl::StrCat("Created ", year, "-")), std::string::npos) << out;
}

TEST_F(ClientCliTest, ARecordOfAnAbortedGameHasNoResult) {
  // Nobody moves first within a second: the match ends with no result, which a PDN record wrote
  // as a draw.
  StartLobby({"--abort_after_s=1"});
  ::ply::testing::HumanSeats seats =
      ::ply::testing::HumanMatch(stub_.get(), stub_.get(), "draughts");
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (Get(seats.id).status() != v1::MATCH_STATUS_FINISHED && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_EQ(Get(seats.id).result().reason(), v1::END_REASON_ABORTED);
  auto [code, out] = Run("carol", {"record", absl::StrCat(seats.id), "--format", "pdn"});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("[Result \"*\"]"), std::string::npos) << out;
  EXPECT_EQ(out.find("1/2-1/2"), std::string::npos) << out;
}

TEST_F(ClientCliTest, MovesPipedInArePlayedInTurnNotDropped) {
  // A script's moves, piped in at once: they were read before the first board and dropped
  // ("still connecting"), and the script's end left the seat with no move played.
  auto [code, out] =
      Run("alice", {"new", "connect4", "--seat1", "me", "--seat2", "bot:beginner", "--detach"});
  ASSERT_EQ(code, 0) << out;
  const int64_t id = LatestMatch();
  const std::string command = absl::StrCat(
      "printf '4\\n4\\n4\\n' | env PLY_SERVER=", lobby_->address(), " XDG_CONFIG_HOME=", home_,
      "/alice NO_COLOR=1 ", PLY_CLIENT_BINARY, " join ", id, " 2>&1");
  FILE* p = popen(command.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) output.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << output;
  const v1::Match m = Get(id);
  int mine = 0;
  for (const v1::MoveRecord& mv : m.moves()) mine += mv.seat() == 0 ? 1 : 0;
  EXPECT_EQ(mine, 3) << output;
  EXPECT_NE(output.find("You left match"), std::string::npos) << output;
}

TEST_F(ClientCliTest, GomokuMovesAreCountedNotListed) {
  auto alice = Ply("alice", {"new", "gomoku", "--seat2", "bot:beginner"});
  ASSERT_TRUE(alice->WaitScreen({"Your move"})) << alice->Output();
  alice->Type("moves\r");
  ASSERT_TRUE(alice->WaitScreen({"Legal moves: 225, too many to list.", "A move is a point"}))
      << alice->Screen();
  alice->Type("quit\r");
  ASSERT_EQ(alice->WaitExit(), 0) << alice->Output();
  // Leaving a bot game says what staying away costs.
  EXPECT_NE(alice->Output().find("past the lobby's bound (5 min"), std::string::npos)
      << alice->Output();
}

TEST_F(ClientCliTest, PlayersLogInPlayARatedGameAndSeeTheirRatings) {
  // Registering prints the key once and keeps it (owner-only).
  auto [code, out] = Run("alice", {"login", "alice"});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("Registered as alice"), std::string::npos) << out;
  const size_t at = out.find("--key ");
  ASSERT_NE(at, std::string::npos) << out;
  std::string key = out.substr(at + 6);
  key = key.substr(0, key.find_first_of("\r\n"));
  struct stat st;
  ASSERT_EQ(stat((home_ + "/alice/ply/seats.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  // The name is taken, ignoring case; the key logs in on another machine.
  std::tie(code, out) = Run("elsewhere", {"login", "ALICE"});
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("taken"), std::string::npos) << out;
  std::tie(code, out) = Run("elsewhere", {"login", "alice", "--key", key});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("Logged in as alice"), std::string::npos) << out;
  // Registering a second name there keeps alice's key: she logs in again by name alone (the
  // file held one player a lobby, and the second login lost the first account's key).
  std::tie(code, out) = Run("elsewhere", {"login", "alice_alt"});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("Registered as alice_alt"), std::string::npos) << out;
  std::tie(code, out) = Run("elsewhere", {"login", "Alice"});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("Logged in as alice"), std::string::npos) << out;
  ASSERT_EQ(Run("bob", {"login", "bob"}).first, 0);

  // A rated game: alice opens, bob joins, a move each (from alice's script), and bob resigns.
  std::tie(code, out) = Run("alice", {"new", "tictactoe", "--seat2", "open", "--detach"});
  ASSERT_EQ(code, 0) << out;
  const int64_t id = LatestMatch();
  auto bob = Ply("bob", {"join", absl::StrCat(id)});
  // Newcomers to Tic-Tac-Toe start at its ceiling (about 900), not 1500.
  const std::string start = NewcomerText("tictactoe");
  ASSERT_TRUE(bob->WaitScreen({"bob (" + start + "?)", "alice (" + start + "?)"})) << bob->Screen();
  std::tie(code, out) = Run("alice", {"move", absl::StrCat(id), "b2"});
  ASSERT_EQ(code, 0) << out;
  ASSERT_TRUE(bob->WaitScreen({"Your move", "1. X b2"})) << bob->Screen();
  bob->Type("a1\r");
  ASSERT_TRUE(bob->WaitScreen({"2. O a1"})) << bob->Screen();
  bob->Type("resign\r");
  ASSERT_TRUE(bob->WaitScreen({"yes"})) << bob->Screen();
  bob->Type("yes\r");
  ASSERT_TRUE(bob->WaitScreen({"Game over"})) << bob->Screen();
  bob->Type("q");
  bob->WaitExit();
  std::tie(code, out) = Run("bob", {"whois", "alice"});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("tictactoe"), std::string::npos) << out;
  EXPECT_NE(out.find(AfterFirstGameText("tictactoe", 1) + "?"), std::string::npos) << out;
  std::tie(code, out) = Run("alice", {"history"});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find(absl::StrCat(id)), std::string::npos) << out;
  // The leaderboard: the bot levels, settled at their ladder ratings; not alice (provisional).
  std::tie(code, out) = Run("alice", {"top", "tictactoe"});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("bot:hard"), std::string::npos) << out;
  EXPECT_EQ(out.find("alice"), std::string::npos) << out;
  // `ply games` shows each level's rating, the ladder's (piped: plain "~").
  std::tie(code, out) = Run("alice", {"games"});
  ASSERT_EQ(code, 0) << out;
  const LadderRating* easy = FindGame("connect4")->ladder.Find("easy");
  ASSERT_NE(easy, nullptr);
  EXPECT_NE(out.find(absl::StrCat("easy ~", std::lround(easy->rating))), std::string::npos) << out;

  // --casual makes a game against a bot unrated (it was read by `play` only: a player asking
  // for a casual game lost 693 points to bot:beginner); without it the game is rated.
  for (bool casual : {true, false}) {
    std::vector<std::string> args = {"new", "tictactoe", "--seat2", "bot:beginner", "--detach"};
    if (casual) args.push_back("--casual");
    std::tie(code, out) = Run("alice", args);
    ASSERT_EQ(code, 0) << out;
    const v1::Match made = Get(LatestMatch());
    ASSERT_EQ(made.seats_size(), 2);
    EXPECT_EQ(made.seats(0).player(), "alice");
    EXPECT_EQ(made.rated(), !casual);
  }
}

TEST_F(ClientCliTest, TwoPlayersAskingToPlayAreSeatedAgainstEachOther) {
  // Pairing needs a player: a guest is told how to become one.
  auto [code, out] = Run("alice", {"play", "tictactoe"});
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("ply login NAME"), std::string::npos) << out;
  ASSERT_EQ(Run("alice", {"login", "alice"}).first, 0);
  ASSERT_EQ(Run("bob", {"login", "bob"}).first, 0);

  auto alice = Ply("alice", {"play", "tictactoe"});
  ASSERT_TRUE(alice->WaitScreen({"Looking for an opponent in tictactoe as alice"}))
      << alice->Output();
  auto bob = Ply("bob", {"play", "tictactoe"});
  // Both land on the same live board, one of them to move.
  const std::string start = NewcomerText("tictactoe");
  ASSERT_TRUE(alice->WaitScreen({"alice (" + start + "?) (you)", "bob (" + start + "?)"}))
      << alice->Screen();
  ASSERT_TRUE(bob->WaitScreen({"bob (" + start + "?) (you)", "alice (" + start + "?)"}))
      << bob->Screen();
  // New players' ratings are provisional, as every other screen marks them.
  EXPECT_NE(alice->Output().find("Paired with bob (" + start + "?)"), std::string::npos)
      << alice->Output();
  EXPECT_NE(bob->Output().find("Paired with alice (" + start + "?)"), std::string::npos)
      << bob->Output();
  PtyProcess* first =
      alice->Screen().find("Your move") != std::string::npos ? alice.get() : bob.get();
  PtyProcess* second = first == alice.get() ? bob.get() : alice.get();
  // A move each (a result before each side moved is not rated), then the first resigns.
  ASSERT_TRUE(first->WaitScreen({"Your move"})) << first->Screen();
  first->Type("b2\r");
  ASSERT_TRUE(second->WaitScreen({"Your move", "1. X b2"})) << second->Screen();
  second->Type("a1\r");
  ASSERT_TRUE(first->WaitScreen({"Your move", "2. O a1"})) << first->Screen();
  first->Type("resign\r");
  ASSERT_TRUE(first->WaitScreen({"yes"})) << first->Screen();
  first->Type("yes\r");
  for (PtyProcess* p : {first, second}) {
    ASSERT_TRUE(p->WaitScreen({"Game over"})) << p->Screen();
    p->Type("q");
    ASSERT_EQ(p->WaitExit(), 0) << p->Output();
  }
  const v1::Match end = Get(LatestMatch());
  EXPECT_EQ(end.status(), v1::MATCH_STATUS_FINISHED);
  // Rated: both seats are players, and both ratings moved.
  ASSERT_EQ(end.seats_size(), 2);
  for (const v1::Seat& seat : end.seats()) {
    EXPECT_EQ(absl::StrCat(seat.rating()), start) << seat.player();
    EXPECT_NE(seat.rating_after(), 0) << seat.player();
    EXPECT_NE(absl::StrCat(seat.rating_after()), start) << seat.player();
  }
}

TEST_F(ClientCliTest, VersionSaysWhichPlyThisIs) {
  auto [code, out] = Run("alice", {"--version"});
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(absl::StartsWith(out, "ply 0.1 (commit ")) << out;
  EXPECT_EQ(out.find("NDEBUG"), std::string::npos) << out;
  // The commit is the one built, not the one cmake last configured from (a build after new
  // commits named the old one). A binary older than the last commit was built before it: that
  // build names an earlier commit, rightly.
  FILE* git =
      popen("git -C " PLY_SOURCE_DIR " log -1 --format='%h %ct' --abbrev=12 2>/dev/null", "r");
  ASSERT_NE(git, nullptr);
  char head[64] = {0};
  long long committed = 0;
  const bool read = fscanf(git, "%63s %lld", head, &committed) == 2;
  struct stat built;
  if (pclose(git) == 0 && read && stat(PLY_CLIENT_BINARY, &built) == 0 &&
      built.st_mtime >= committed) {
    EXPECT_NE(out.find(std::string(absl::StripAsciiWhitespace(head))), std::string::npos) << out;
  }
  // And the help says how TLS is verified.
  std::tie(code, out) = Run("alice", {"help"});
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("--tls verifies the lobby against the system's trusted roots"),
            std::string::npos)
      << out;
}

TEST_F(ClientCliTest, AnalyzeShowsEachMoveMarkedAndReplayAndRecordShowTheAnalysis) {
  // Red, winning, leaves Yellow's three in column 1 open (7): an exact blunder.
  ::ply::testing::HumanSeats seats =
      ::ply::testing::HumanMatch(stub_.get(), stub_.get(), "connect4");
  const std::vector<std::string> moves = {"4", "1", "4", "1", "3", "1", "7", "1"};
  for (size_t i = 0; i < moves.size(); ++i) {
    ASSERT_TRUE(::ply::testing::Move(stub_.get(), seats.id, static_cast<int>(i), moves[i],
                                     seats.tokens[i % 2])
                    .ok());
  }
  const std::string id = absl::StrCat(seats.id);
  // Before any analysis, replay shows none.
  auto [code, out] = Run("carol", {"record", id, "--json"});
  ASSERT_EQ(code, 0) << out;
  EXPECT_FALSE(nlohmann::json::parse(out).contains("analysis")) << out;

  std::tie(code, out) = Run("carol", {"analyze", id});
  ASSERT_EQ(code, 0) << out;
  // The progress bar (stderr is the terminal), the table, the players' lines.
  EXPECT_NE(out.find("analysing ["), std::string::npos) << out;
  EXPECT_NE(out.find("8/8 positions"), std::string::npos) << out;
  std::smatch row;
  ASSERT_TRUE(std::regex_search(
      out, row,
      std::regex(
          "\n +7  Red +7 +\\?\\? +win in [0-9]+ \\(100%\\) +loss in [0-9]+ \\(0%\\) += +1 ")))
      << out;
  EXPECT_NE(out.find("Red (alice): accuracy"), std::string::npos) << out;
  EXPECT_NE(out.find("Red (alice): accuracy"), std::string::npos) << out;
  EXPECT_NE(out.find("4 moves: 0 inaccuracies (?!), 0 mistakes (?), 1 blunder (?\?)"),
            std::string::npos)
      << out;

  std::tie(code, out) = Run("carol", {"analyze", id, "--json"});
  ASSERT_EQ(code, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_EQ(j["moves"].size(), 8u) << out;
  EXPECT_EQ(j["moves"][6]["mark"], "MOVE_MARK_BLUNDER");
  EXPECT_EQ(j["moves"][6]["exact_verdict"], true);
  EXPECT_EQ(j["moves"][6]["best_move"], "1");
  EXPECT_EQ(j["players"][0]["blunders"], 1);

  std::tie(code, out) = Run("carol", {"record", id, "--json"});
  ASSERT_EQ(code, 0) << out;
  j = nlohmann::json::parse(out);
  EXPECT_EQ(j["moves"].size(), 8u) << out;
  EXPECT_EQ(j["analysis"]["moves"][6]["mark"], "MOVE_MARK_BLUNDER") << out;

  auto replay = Ply("carol", {"replay", id});
  ASSERT_TRUE(replay->WaitScreen({"Start position"})) << replay->Output();
  replay->Type("G");
  ASSERT_TRUE(replay->WaitScreen({"Move 8 of 8", "Analysis: no mark (exact); the best move"}))
      << replay->Screen();
  replay->Type("p");
  ASSERT_TRUE(replay->WaitScreen({"Move 7 of 8", "Analysis: ?? blunder (exact); best 1"}))
      << replay->Screen();
  replay->Type("q");
  EXPECT_EQ(replay->WaitExit(), 0);
}

}  // namespace
}  // namespace ply
