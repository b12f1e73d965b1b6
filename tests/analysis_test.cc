// Post-game analysis through the lobby (LobbyService.AnalyzeMatch), end to end: real PostgreSQL,
// two ply-bot processes and ply-lobby processes. A finished match is analysed once, over both
// bots, and stored (a second request, on another instance too, gets the stored analysis at
// once; two at the same time on two instances analyse once); a match with a person in it cannot
// be analysed while it runs, a bot game can (partially, not stored). A Reversi win that ply-bot
// proves only as an outcome is shown and stored as "win (proven)", within a node budget that
// makes it independent of the clock, and a smaller node budget keeps the solver from it.
// Capacity: on one small bot beside a bot match two clients are both answered; analyses beyond
// the running ones wait their turn told their place; per-client limits hold, stored analyses are
// always served.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "engine/registry/registry.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/stack_helper.h"

namespace ply {
namespace {

using ::ply::testing::Analysed;
using ::ply::testing::Analyze;
using ::ply::testing::Create;
using ::ply::testing::HumanMatch;
using ::ply::testing::HumanSeats;
using ::ply::testing::LobbyInstance;
using ::ply::testing::Move;
using ::ply::testing::TakingSeat;

// Red, winning, leaves Yellow's three in column 1 open (7); Yellow wins with 1.
constexpr char kBlunderGame[] = "4 1 4 1 3 1 7 1";

class AnalysisTest : public ::ply::testing::StackFixture {
 protected:
  void SetUp() override { UseNewDatabase("analysis"); }

  static std::vector<std::string> AnalysisFlags() {
    return {"--analysis_ms=1500", "--analysis_parallel=4"};
  }

  // A finished human game: kBlunderGame played by two people.
  int64_t FinishedGame(v1::LobbyService::Stub* stub) {
    HumanSeats seats = HumanMatch(stub, stub, "connect4");
    std::vector<std::string> moves = absl::StrSplit(kBlunderGame, ' ');
    for (size_t i = 0; i < moves.size(); ++i) {
      grpc::Status s = Move(stub, seats.id, static_cast<int>(i), moves[i], seats.tokens[i % 2]);
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
    EXPECT_EQ(Get(seats.id).status(), v1::MATCH_STATUS_FINISHED);
    return seats.id;
  }

  // FinishedReversiGame judged with `nodes` a position (at depth 4; the clock, 30 s, the bots'
  // largest budget, never runs out first, so the verdicts do not depend on the machine's load):
  // the analysis as made (`first`) and as stored.
  void JudgeReversiGameOnNodes(int64_t nodes, Analysed* first, Analysed* stored);
};

TEST_F(AnalysisTest, FinishedMatchIsAnalysedOverEveryBotAndStoredOnce) {
  StartLobby(AnalysisFlags());
  const int64_t id = FinishedGame(stub_.get());
  // Nothing is stored before the first analysis.
  Analysed none = Analyze(stub_.get(), id, /*stored_only=*/true);
  EXPECT_EQ(none.status.error_code(), grpc::StatusCode::NOT_FOUND) << none.status.error_message();

  Analysed first = Analyze(stub_.get(), id);
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  ASSERT_TRUE(first.has_analysis);
  // Progress: from 0 to every position (8 before each move; the last is over).
  ASSERT_GE(first.progress.size(), 2u);
  EXPECT_EQ(first.progress.front().positions_done(), 0);
  EXPECT_EQ(first.progress.back().positions_done(), 8);
  EXPECT_EQ(first.progress.back().positions(), 8);
  const v1::MatchAnalysis& a = first.analysis;
  EXPECT_EQ(a.match_id(), id);
  EXPECT_FALSE(a.partial());
  ASSERT_EQ(a.moves_size(), 8);
  const v1::MoveAnalysis& blunder = a.moves(6);
  EXPECT_EQ(blunder.move(), "7");
  EXPECT_EQ(blunder.mark(), v1::MOVE_MARK_BLUNDER);
  EXPECT_TRUE(blunder.exact_verdict());
  EXPECT_EQ(blunder.best_move(), "1");
  EXPECT_NE(blunder.score_before_text().find("win in"), std::string::npos);
  EXPECT_NE(blunder.score_after_text().find("loss in"), std::string::npos);
  ASSERT_EQ(a.players_size(), 2);
  EXPECT_EQ(a.players(0).blunders(), 1);
  // Four positions at a time, round robin: both bot instances judge some. The lobby's channel
  // sends only to the instances it has connected to, and on a loaded machine the second may
  // connect after this first analysis is done: then the next game's analysis uses it.
  std::set<std::string> instances(a.instances().begin(), a.instances().end());
  if (instances.size() < 2) {
    const Analysed next = Analyze(stub_.get(), FinishedGame(stub_.get()));
    ASSERT_TRUE(next.status.ok()) << next.status.error_message();
    instances.insert(next.analysis.instances().begin(), next.analysis.instances().end());
  }
  EXPECT_EQ(instances.size(), 2u);

  // Asked again, here or on another instance: the stored analysis at once, no progress.
  Analysed again = Analyze(stub_.get(), id);
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_TRUE(again.progress.empty());
  EXPECT_EQ(again.analysis.analysed_ms(), a.analysed_ms());
  EXPECT_EQ(again.analysis.moves(6).mark(), v1::MOVE_MARK_BLUNDER);
  LobbyInstance other = StartLobbyInstance({BotTargetFlag()});
  ASSERT_NE(other.process, nullptr);
  Analysed stored = Analyze(other.get(), id, /*stored_only=*/true);
  ASSERT_TRUE(stored.status.ok()) << stored.status.error_message();
  EXPECT_EQ(stored.analysis.analysed_ms(), a.analysed_ms());
  EXPECT_EQ(stored.analysis.moves_size(), 8);
}

// A finished Reversi game to the full board, no passes: a depth-1 search (Black) against a
// depth-3 one. Before move 44 (f8) 17 cells are empty and White, to move, wins.
int64_t FinishedReversiGame(v1::LobbyService::Stub* stub) {
  HumanSeats seats = HumanMatch(stub, stub, "reversi");
  const std::vector<std::string> moves = absl::StrSplit(
      "d3 c5 f6 e3 f3 f4 f5 g4 g3 g6 h4 e6 c4 h3 h2 c2 c3 d2 d6 g5 d1 b2 d7 c6 c1 b1 a1 e2 e1 h5 "
      "h6 f2 b3 g2 e7 f1 h1 g1 b4 c7 b5 d8 h7 f8 e8 c8 f7 b6 a6 a4 a3 a5 b7 a2 b8 a8 a7 g8 g7 h8",
      ' ');
  for (size_t i = 0; i < moves.size(); ++i) {
    grpc::Status s = Move(stub, seats.id, static_cast<int>(i), moves[i], seats.tokens[i % 2]);
    EXPECT_TRUE(s.ok()) << moves[i] << ": " << s.error_message();
    if (!s.ok()) return seats.id;
  }
  return seats.id;
}

void AnalysisTest::JudgeReversiGameOnNodes(int64_t nodes, Analysed* first, Analysed* stored) {
  StartLobby({"--analysis_ms=30000", absl::StrCat("--analysis_nodes=", nodes), "--analysis_depth=4",
              "--analysis_parallel=4"});
  const int64_t id = FinishedReversiGame(stub_.get());
  ASSERT_EQ(Get(id).status(), v1::MATCH_STATUS_FINISHED);
  *first = Analyze(stub_.get(), id);
  ASSERT_TRUE(first->status.ok()) << first->status.error_message();
  *stored = Analyze(stub_.get(), id, /*stored_only=*/true);
  ASSERT_TRUE(stored->status.ok()) << stored->status.error_message();
}

TEST_F(AnalysisTest, AReversiWinProvenByTheWinLossDrawSolveIsShownAsAProvenWin) {
  // 4,500,000 nodes a position: the judge's solver has three fifths of them, 2,700,000
  // (Reversi::PlanSolve), exact up to 16 empty cells and win/loss/draw at 17. Before move 44
  // ply-bot proves the outcome only, and the lobby must keep it a proven win
  // (ChooseMoveResponse.outcome_only), not a "+1" margin.
  Analysed first, stored;
  ASSERT_NO_FATAL_FAILURE(JudgeReversiGameOnNodes(4500000, &first, &stored));
  for (const Analysed* a : {&first, &stored}) {
    ASSERT_EQ(a->analysis.moves_size(), 60);
    const v1::MoveAnalysis& white = a->analysis.moves(43);
    EXPECT_EQ(white.move(), "f8");
    EXPECT_EQ(white.score_before_text(), "win (proven)");
    // Black's move before it, seen from Black: the position it left is a proven loss.
    EXPECT_EQ(a->analysis.moves(42).score_after_text(), "loss (proven)");
  }
}

TEST_F(AnalysisTest, TheNodeBudgetLimitsTheJudgeWhateverTheClock) {
  // 100,000 nodes a position leave the solver 60,000: exact up to 12 empty cells, win/loss/draw
  // at 13, where the 30 s clock alone would solve exactly up to 22. The position before move 44
  // (17 empty) is then judged by the depth-4 search, not proven; move 49's, from 12 empty to 11,
  // still both are.
  Analysed first, stored;
  ASSERT_NO_FATAL_FAILURE(JudgeReversiGameOnNodes(100000, &first, &stored));
  ASSERT_EQ(first.analysis.moves_size(), 60);
  EXPECT_FALSE(first.analysis.moves(43).exact_verdict());
  EXPECT_EQ(first.analysis.moves(43).score_before_text().find("proven"), std::string::npos)
      << first.analysis.moves(43).score_before_text();
  EXPECT_TRUE(first.analysis.moves(48).exact_verdict());
  // The budget is part of the analysis, stored with it.
  EXPECT_EQ(first.analysis.max_nodes(), 100000);
  EXPECT_EQ(stored.analysis.max_nodes(), 100000);
}

TEST_F(AnalysisTest, TwoInstancesAskingAtOnceAnalyseOnce) {
  StartLobby(AnalysisFlags());
  std::vector<std::string> flags = {BotTargetFlag()};
  for (const std::string& f : AnalysisFlags()) flags.push_back(f);
  LobbyInstance second = StartLobbyInstance(flags);
  ASSERT_NE(second.process, nullptr);
  const int64_t id = FinishedGame(stub_.get());
  Analysed results[2];
  std::thread a([&] { results[0] = Analyze(stub_.get(), id); });
  std::thread b([&] { results[1] = Analyze(second.get(), id); });
  a.join();
  b.join();
  int waited = 0;
  for (const Analysed& r : results) {
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    ASSERT_TRUE(r.has_analysis);
    for (const v1::AnalysisProgress& p : r.progress) waited += p.waiting() ? 1 : 0;
  }
  // One analysis, made once: the same moment in both answers, and one of them waited for it
  // (or, had it come second, found it stored).
  EXPECT_EQ(results[0].analysis.analysed_ms(), results[1].analysis.analysed_ms());
  EXPECT_LE(waited, 1);
  int analysed_here = 0;
  for (const Analysed& r : results) {
    for (const v1::AnalysisProgress& p : r.progress) {
      if (!p.waiting() && p.positions_done() == p.positions() && p.positions() > 0) {
        ++analysed_here;
        break;
      }
    }
  }
  EXPECT_EQ(analysed_here, 1);
}

TEST_F(AnalysisTest, PlayersCannotAnalyseTheirMatchWhileItRuns) {
  StartLobby(AnalysisFlags());
  EXPECT_EQ(Analyze(stub_.get(), 999999).status.error_code(), grpc::StatusCode::NOT_FOUND);
  // Waiting for a second player: nothing to analyse.
  v1::CreateMatchResponse waiting;
  ASSERT_TRUE(
      Create(stub_.get(), "connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_HUMAN}, {}, &waiting)
          .ok());
  EXPECT_EQ(Analyze(stub_.get(), waiting.match().id()).status.error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  // A person against a bot, under way: refused to everyone, the player included.
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(stub_.get(), "connect4", {v1::SEAT_KIND_HUMAN, v1::SEAT_KIND_BOT},
                     {"", "easy"}, &created, TakingSeat(0, "alice"))
                  .ok());
  ASSERT_TRUE(Move(stub_.get(), created.match().id(), 0, "4", created.seat_token()).ok());
  Analysed refused = Analyze(stub_.get(), created.match().id());
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << refused.status.error_message();
  EXPECT_FALSE(refused.has_analysis);
}

TEST_F(AnalysisTest, SpectatorsAnalyseARunningBotGameWithoutStoringIt) {
  StartLobby(AnalysisFlags());
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(stub_.get(), "connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT},
                     {"easy", "easy"}, &created,
                     [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(1500); })
                  .ok());
  const int64_t id = created.match().id();
  // Wait for a few moves.
  absl::Time until = absl::Now() + absl::Seconds(30);
  while (Get(id).moves_size() < 2 && absl::Now() < until) absl::SleepFor(absl::Milliseconds(100));
  Analysed live = Analyze(stub_.get(), id);
  ASSERT_TRUE(live.status.ok()) << live.status.error_message();
  ASSERT_TRUE(live.has_analysis);
  EXPECT_TRUE(live.analysis.partial());
  EXPECT_GE(live.analysis.moves_size(), 2);
  EXPECT_EQ(Analyze(stub_.get(), id, /*stored_only=*/true).status.error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// A spectator following a bot game asks again and again: each request judges only the positions
// played since the last (the verdicts are kept), gives the earlier moves the same verdicts, and
// does not count as a fresh analysis against the hourly limit; once the game is over, the stored
// analysis takes the kept verdicts too.
TEST_F(AnalysisTest, FollowingABotGameJudgesOnlyTheNewPositions) {
  // Analyzer::kUpdatePositions: an analysis judging no more is an update.
  constexpr int kUpdatePositions = 4;
  StartLobby({"--analysis_ms=400", "--analysis_client_per_hour=2"});
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(stub_.get(), "connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT},
                     {"easy", "easy"}, &created,
                     [](v1::CreateMatchRequest& r) { r.set_bot_pacing_ms(700); })
                  .ok());
  const int64_t id = created.match().id();
  const absl::Time until = absl::Now() + absl::Seconds(90);
  while (Get(id).moves_size() < 2 && absl::Now() < until) absl::SleepFor(absl::Milliseconds(300));
  v1::MatchAnalysis last;
  int requests = 0, updates = 0;
  while (absl::Now() < until) {
    // A follower asks again when a move has come.
    v1::Match now = Get(id);
    while (now.status() == v1::MATCH_STATUS_ACTIVE && now.moves_size() <= last.moves_size() &&
           absl::Now() < until) {
      absl::SleepFor(absl::Milliseconds(300));
      now = Get(id);
    }
    if (now.status() != v1::MATCH_STATUS_ACTIVE) break;
    const Analysed r = Analyze(stub_.get(), id);
    if (r.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
        (r.status.ok() && !r.analysis.partial())) {
      break;  // the game ended meanwhile
    }
    ASSERT_TRUE(r.status.ok()) << "request " << requests << ": " << r.status.error_message();
    ASSERT_TRUE(r.has_analysis);
    ASSERT_FALSE(r.progress.empty());
    const int judged = r.progress.back().positions();
    ++requests;
    if (last.moves_size() > 0) {
      // Only what was played since the last answer is judged (and the last position again,
      // judged without a move then, when the move played there is not the judge's best).
      EXPECT_LE(judged, r.analysis.moves_size() - last.moves_size() + 1) << "request " << requests;
      if (judged <= kUpdatePositions) ++updates;
      // The earlier moves keep their verdicts.
      for (int i = 0; i + 1 < last.moves_size(); ++i) {
        EXPECT_EQ(r.analysis.moves(i).score_before(), last.moves(i).score_before()) << i;
        EXPECT_EQ(r.analysis.moves(i).best_move(), last.moves(i).best_move()) << i;
        EXPECT_EQ(r.analysis.moves(i).mark(), last.moves(i).mark()) << i;
      }
    } else {
      EXPECT_GE(judged, 2);
    }
    last = r.analysis;
  }
  // More requests than the hourly limit: the updates did not count against it.
  EXPECT_GT(updates, 2) << requests << " requests";
  v1::Match finished = Get(id);
  while (finished.status() != v1::MATCH_STATUS_FINISHED && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(300));
    finished = Get(id);
  }
  ASSERT_EQ(finished.status(), v1::MATCH_STATUS_FINISHED);
  const Analysed final_analysis = Analyze(stub_.get(), id);
  ASSERT_TRUE(final_analysis.status.ok()) << final_analysis.status.error_message();
  EXPECT_FALSE(final_analysis.analysis.partial());
  EXPECT_EQ(final_analysis.analysis.moves_size(), finished.moves_size());
  ASSERT_FALSE(final_analysis.progress.empty());
  EXPECT_LT(final_analysis.progress.back().positions(), finished.moves_size() / 2)
      << "the kept verdicts were judged again";
  EXPECT_TRUE(Analyze(stub_.get(), id, /*stored_only=*/true).status.ok());
}

// Analyses each match at once from a client of its own (198.51.100.1, .2, ...: the lobby must
// trust 127.0.0.1 as a proxy), in the matches' order.
std::vector<Analysed> AnalyseAtOnce(v1::LobbyService::Stub* stub,
                                    const std::vector<int64_t>& matches) {
  std::vector<Analysed> results(matches.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < matches.size(); ++i) {
    clients.emplace_back([&, i] {
      results[i] = Analyze(stub, matches[i], false, absl::StrCat("198.51.100.", i + 1));
    });
  }
  for (std::thread& t : clients) t.join();
  return results;
}

// Analysis is background work that waits for capacity and never fails for it: on one ply-bot
// with 2 workers (of which 1 may serve background work, with 1 queue place), two clients
// analysing at once beside a running bot-vs-bot match are both answered (their positions refused
// by the busy bot are asked again), and the bot match goes on meanwhile.
TEST_F(AnalysisTest, OneSmallBotServesTwoClientsAtOnceBesideABotMatch) {
  auto bot = ::ply::testing::ServerProcess::Start(
      PLY_BOT_BINARY, {"--port=0", "--host=127.0.0.1", "--workers=2", "--tt_mb=4",
                       "--log_level=error", "--instance=lonely"});
  ASSERT_TRUE(bot.ok()) << bot.status();
  StartLobby({absl::StrCat("--bot_target=ipv4:", (*bot)->address()), "--analysis_ms=300",
              "--trusted_proxies=127.0.0.1"});
  const int64_t games[2] = {FinishedGame(stub_.get()), FinishedGame(stub_.get())};
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(stub_.get(), "connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT},
                     {"hard", "hard"}, &created)
                  .ok());
  const int64_t bots_match = created.match().id();
  const int moves_before = Get(bots_match).moves_size();

  const std::vector<Analysed> results = AnalyseAtOnce(stub_.get(), {games[0], games[1]});
  for (const Analysed& r : results) {
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    ASSERT_TRUE(r.has_analysis);
    ASSERT_EQ(r.analysis.moves_size(), 8);
    EXPECT_EQ(r.analysis.moves(6).mark(), v1::MOVE_MARK_BLUNDER);
    EXPECT_EQ(r.analysis.instances_size(), 1);
  }
  // The bot match was never failed by the analyses beside it: it goes on moving (a loaded
  // machine may need a while for "hard" moves, so give it some).
  v1::Match after = Get(bots_match);
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (after.moves_size() < moves_before + 2 && after.status() != v1::MATCH_STATUS_FINISHED &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
    after = Get(bots_match);
  }
  EXPECT_TRUE(after.moves_size() >= moves_before + 2 || after.status() == v1::MATCH_STATUS_FINISHED)
      << "the bot match made " << after.moves_size() - moves_before << " moves";
}

// A resigned Gomoku game of eight stones: no bot proves its positions, so each takes the judge
// its whole --analysis_ms (a Connect Four game's are proven from the book at once, and never
// keep a bot busy).
int64_t ResignedGomokuGame(v1::LobbyService::Stub* stub) {
  HumanSeats seats = HumanMatch(stub, stub, "gomoku");
  const char* moves[] = {"h8", "h9", "i8", "i9", "g10", "j7", "c3", "m13"};
  for (int ply = 0; ply < 8; ++ply) {
    grpc::Status moved = Move(stub, seats.id, ply, moves[ply], seats.tokens[ply % 2]);
    EXPECT_TRUE(moved.ok()) << moved.error_message();
  }
  EXPECT_TRUE(::ply::testing::Resign(stub, seats.id, seats.tokens[0]).ok());
  return seats.id;
}

TEST_F(AnalysisTest, AnalysisCallsAreCountedAndFitTheBotsRoomForBackgroundWork) {
  // Analyses' bot calls showed nowhere in the lobby's metrics, and on a one-bot stack (one
  // worker and one queue place for background work) an analysis sent four positions at a time
  // and had most of them refused as busy and asked again: 57% of the bot's calls. The analysis
  // now keeps no more positions in flight than the bots took, and the lobby counts the calls.
  auto bot = ::ply::testing::ServerProcess::Start(
      PLY_BOT_BINARY, {"--port=0", "--host=127.0.0.1", "--workers=2", "--tt_mb=4",
                       "--log_level=error", "--instance=lonely"});
  ASSERT_TRUE(bot.ok()) << bot.status();
  ::ply::testing::LobbyInstance lobby = StartLobbyInstance(
      {absl::StrCat("--bot_target=ipv4:", (*bot)->address()), "--bot_pacing_ms=0",
       "--analysis_ms=150", "--metrics_port=0", "--trusted_proxies=127.0.0.1"});
  ASSERT_NE(lobby.process, nullptr);
  ASSERT_GT(lobby.metrics_port, 0);
  lobby_ = std::move(lobby.process);
  stub_ = std::move(lobby.stub);
  const int64_t games[2] = {ResignedGomokuGame(stub_.get()), ResignedGomokuGame(stub_.get())};
  for (const int64_t game : games) {
    const Analysed result = Analyze(stub_.get(), game);
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    ASSERT_EQ(result.analysis.moves_size(), 8);
  }
  httplib::Client client("127.0.0.1", lobby.metrics_port);
  httplib::Result page = client.Get("/metrics");
  ASSERT_TRUE(page && page->status == 200);
  auto metric = [&](const std::string& name) -> int64_t {
    for (absl::string_view line : absl::StrSplit(page->body, '\n')) {
      int64_t value = 0;
      if (absl::StartsWith(line, name + " ") &&
          absl::SimpleAtoi(line.substr(name.size() + 1), &value)) {
        return value;
      }
    }
    return -1;
  };
  const int64_t calls = metric("ply_lobby_analysis_bot_calls_total");
  const int64_t busy = metric("ply_lobby_analysis_bot_busy_total");
  EXPECT_EQ(metric("ply_lobby_analysis_bot_failures_total"), 0) << page->body;
  EXPECT_EQ(calls - busy, 18) << "each position (9 a game) answered once";
  // The first analysis learns the bot's room from two refusals (and tries one more now and
  // then); the next starts from what it learned. Before: 9 or 10 of 27 or 28 calls refused.
  EXPECT_LE(busy, 6) << calls << " calls";
  std::printf("analysis on one background worker: %lld calls, %lld refused as busy\n",
              static_cast<long long>(calls), static_cast<long long>(busy));
}

// Every kind of game on the smallest stack: one ply-bot on its defaults (2 workers), a bot match
// playing, and two clients analysing at once, each half of the games: a short game of each kind
// that a player resigned.
TEST_F(AnalysisTest, EveryKindOfGameIsAnalysedOnOneDefaultBot) {
  auto bot = ::ply::testing::ServerProcess::Start(
      PLY_BOT_BINARY, {"--port=0", "--host=127.0.0.1", "--log_level=error", "--instance=lonely"});
  ASSERT_TRUE(bot.ok()) << bot.status();
  StartLobby({absl::StrCat("--bot_target=ipv4:", (*bot)->address()), "--analysis_ms=200",
              "--trusted_proxies=127.0.0.1"});
  v1::CreateMatchResponse created;
  ASSERT_TRUE(Create(stub_.get(), "connect4", {v1::SEAT_KIND_BOT, v1::SEAT_KIND_BOT},
                     {"hard", "hard"}, &created)
                  .ok());
  const int64_t bots_match = created.match().id();
  std::vector<std::pair<std::string, int64_t>> games;
  for (const GameInfo& info : ListGames()) {
    HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), info.name);
    for (int ply = 0; ply < 4; ++ply) {
      const v1::Match m = Get(seats.id);
      ASSERT_EQ(m.status(), v1::MATCH_STATUS_ACTIVE) << info.name;
      ASSERT_FALSE(m.legal_moves().empty()) << info.name;
      grpc::Status moved =
          Move(stub_.get(), seats.id, ply, m.legal_moves(0), seats.tokens[m.to_move() & 1]);
      ASSERT_TRUE(moved.ok()) << info.name << ": " << moved.error_message();
    }
    ASSERT_TRUE(::ply::testing::Resign(stub_.get(), seats.id, seats.tokens[0]).ok()) << info.name;
    games.push_back({info.name, seats.id});
  }
  ASSERT_GE(games.size(), 7u);
  std::vector<Analysed> results(games.size());
  std::vector<std::thread> clients;
  for (size_t c = 0; c < 2; ++c) {
    clients.emplace_back([&, c] {
      for (size_t i = c; i < games.size(); i += 2) {
        results[i] =
            Analyze(stub_.get(), games[i].second, false, absl::StrCat("198.51.100.", c + 1));
      }
    });
  }
  for (std::thread& t : clients) t.join();
  for (size_t i = 0; i < games.size(); ++i) {
    const Analysed& r = results[i];
    ASSERT_TRUE(r.status.ok()) << games[i].first << ": " << r.status.error_message();
    ASSERT_TRUE(r.has_analysis) << games[i].first;
    EXPECT_EQ(r.analysis.game(), games[i].first);
    EXPECT_EQ(r.analysis.moves_size(), 4) << games[i].first;
    EXPECT_EQ(r.analysis.players_size(), 2) << games[i].first;
  }
  // The bot match went on beside them.
  EXPECT_GT(Get(bots_match).moves_size(), 0);
}

// Beyond --analysis_max_running an analysis waits its turn, told its place, and is then made.
// The games are Gomoku openings, which no bot proves: each position takes the judge its whole
// --analysis_ms, so the analysis that runs first (about 2 s) outlasts the other two requests'
// arrival on a loaded machine. (With Connect Four games, whose positions the solver proves at
// once, the first could end before the third client connected, and no one was second in line.)
TEST_F(AnalysisTest, AnalysesBeyondTheRunningOnesWaitTheirTurnToldTheirPlace) {
  StartLobby({"--analysis_ms=500", "--analysis_parallel=1", "--analysis_max_running=1",
              "--trusted_proxies=127.0.0.1"});
  std::vector<int64_t> games;
  for (int i = 0; i < 3; ++i) {
    HumanSeats seats = HumanMatch(stub_.get(), stub_.get(), "gomoku");
    for (const char* move : {"h8", "h9", "i8", "i9"}) {
      const int ply = Get(seats.id).moves_size();
      grpc::Status moved = Move(stub_.get(), seats.id, ply, move, seats.tokens[ply % 2]);
      ASSERT_TRUE(moved.ok()) << moved.error_message();
    }
    ASSERT_TRUE(::ply::testing::Resign(stub_.get(), seats.id, seats.tokens[0]).ok());
    games.push_back(seats.id);
  }
  const std::vector<Analysed> results = AnalyseAtOnce(stub_.get(), games);
  int queued = 0;
  std::set<int> places;
  for (const Analysed& r : results) {
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    ASSERT_TRUE(r.has_analysis);
    EXPECT_EQ(r.analysis.moves_size(), 4);
    bool waited = false;
    for (const v1::AnalysisProgress& p : r.progress) {
      if (p.queue_position() > 0) {
        waited = true;
        places.insert(p.queue_position());
        EXPECT_EQ(p.running(), 1);
        EXPECT_LE(p.queue_position(), p.queued());
      }
    }
    queued += waited;
  }
  // One ran at once; the others waited, one of them second in line at first.
  EXPECT_EQ(queued, 2);
  EXPECT_EQ(places, (std::set<int>{1, 2}));
}

// One client cannot make the bots work for it without end: analyses running or waiting at
// once and started in an hour are limited per client, and a stored analysis is served anyway.
TEST_F(AnalysisTest, OneClientsAnalysesAreLimitedAndStoredOnesAlwaysServed) {
  StartLobby({"--analysis_ms=1500", "--analysis_client_per_hour=2"});
  const int64_t games[3] = {FinishedGame(stub_.get()), FinishedGame(stub_.get()),
                            FinishedGame(stub_.get())};
  for (int i = 0; i < 2; ++i) {
    const Analysed r = Analyze(stub_.get(), games[i]);
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  }
  const Analysed third = Analyze(stub_.get(), games[2]);
  EXPECT_EQ(third.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(third.status.error_message().find("2 analyses in the last hour"), std::string::npos)
      << third.status.error_message();
  EXPECT_NE(third.status.error_message().find("the next may start in"), std::string::npos)
      << third.status.error_message();
  const Analysed stored = Analyze(stub_.get(), games[0]);
  ASSERT_TRUE(stored.status.ok()) << stored.status.error_message();
  EXPECT_TRUE(stored.progress.empty());

  // At most one at once: a second while a long one (a whole Reversi game, one position at a
  // time) runs is refused.
  StartLobby({"--analysis_ms=3000", "--analysis_parallel=1", "--analysis_client_in_flight=1"});
  const int64_t reversi = FinishedReversiGame(stub_.get());
  grpc::ClientContext context;
  v1::AnalyzeMatchRequest request;
  request.set_match_id(reversi);
  auto reader = stub_->AnalyzeMatch(&context, request);
  v1::AnalyzeMatchEvent first;
  ASSERT_TRUE(reader->Read(&first));
  const Analysed second = Analyze(stub_.get(), games[2]);
  EXPECT_EQ(second.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(second.status.error_message().find("1 analysis running or waiting already"),
            std::string::npos)
      << second.status.error_message();
  context.TryCancel();
  (void)reader->Finish();
}

}  // namespace
}  // namespace ply
