// How long the lobby takes to analyse a match, with one and with two ply-bot instances: a
// 40-move Connect Four match (the perfect level against itself, resigned before its last move),
// a Connect Four match of hard against hard (200 ms a move) and a 60-move Reversi match (medium
// against medium). Real processes: a throwaway PostgreSQL,
// ply-bot instances with one search worker each, and ply-lobby. Each (game, instances) pair is
// analysed --runs times, each time on a fresh database so nothing is stored yet; it prints the
// times and their median. A program, not a test: the numbers depend on the machine and its load.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "engine/core/flags_usage.h"
#include "engine/registry/registry.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/lobby_helper.h"
#include "tests/postgres_helper.h"
#include "tests/process_helper.h"

ABSL_FLAG(int, runs, 3, "analyses per game and number of instances");
ABSL_FLAG(int64_t, analysis_ms, 1000, "the lobby's --analysis_ms");
ABSL_FLAG(int, analysis_parallel, 4, "the lobby's --analysis_parallel");

namespace ply {
namespace {

using ::ply::testing::PostgresCluster;
using ::ply::testing::ServerProcess;

// `plies` moves of `level` against itself (fewer if the game ends first).
std::vector<std::string> SelfPlay(const std::string& game, const std::string& level, int plies,
                                  int64_t time_ms) {
  auto g = CreateGame(game);
  if (!g.ok()) return {};
  SearchCache cache;
  const Difficulty* d = FindLevel((*g)->Info().levels, level);
  SearchRequest request{.level = *d, .time_ms = time_ms, .seed = 1};
  while (static_cast<int>((*g)->History().size()) < plies && !(*g)->Status().over) {
    auto r = (*g)->ChooseMove(request, &cache);
    if (!r.ok() || !(*g)->Play(r->move).ok()) break;
  }
  return (*g)->History();
}

// Plays `moves` as two people, then resigns if the game goes on: a finished match.
absl::StatusOr<int64_t> FinishedMatch(v1::LobbyService::Stub* stub, const std::string& game,
                                      const std::vector<std::string>& moves) {
  ::ply::testing::HumanSeats seats = ::ply::testing::HumanMatch(stub, stub, game);
  for (size_t i = 0; i < moves.size(); ++i) {
    grpc::Status s =
        ::ply::testing::Move(stub, seats.id, static_cast<int>(i), moves[i], seats.tokens[i % 2]);
    if (!s.ok()) return absl::InternalError(s.error_message());
  }
  v1::ResignRequest resign;
  resign.set_match_id(seats.id);
  grpc::ClientContext context;
  context.AddMetadata("authorization", absl::StrCat("Bearer ", seats.tokens[moves.size() % 2]));
  v1::Match ignored;
  (void)stub->Resign(&context, resign, &ignored);
  return seats.id;
}

absl::StatusOr<double> AnalyseSeconds(v1::LobbyService::Stub* stub, int64_t id) {
  v1::AnalyzeMatchRequest request;
  request.set_match_id(id);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Minutes(10)));
  const absl::Time start = absl::Now();
  auto reader = stub->AnalyzeMatch(&context, request);
  v1::AnalyzeMatchEvent e;
  bool got = false;
  while (reader->Read(&e)) got |= e.has_analysis();
  grpc::Status s = reader->Finish();
  if (!s.ok()) return absl::InternalError(s.error_message());
  if (!got) return absl::InternalError("no analysis");
  return absl::ToDoubleSeconds(absl::Now() - start);
}

int Main() {
  struct Case {
    std::string game;
    std::vector<std::string> moves;
  };
  // Perfect play stays in the opening book and the solver's reach, so its analysis is nearly
  // free; hard against hard at 200 ms a move leaves the book early and makes the bots search.
  std::vector<Case> cases = {{"connect4", SelfPlay("connect4", "perfect", 40, 5000)},
                             {"connect4", SelfPlay("connect4", "hard", 40, 200)},
                             {"reversi", SelfPlay("reversi", "medium", 60, 300)}};
  for (const Case& c : cases) {
    std::printf("%s: %zu moves: %s\n", c.game.c_str(), c.moves.size(),
                absl::StrJoin(c.moves, " ").c_str());
  }
  auto cluster = PostgresCluster::Start();
  if (!cluster.ok()) {
    std::fprintf(stderr, "postgres: %s\n", std::string(cluster.status().message()).c_str());
    return 1;
  }
  int database = 0;
  std::printf(
      "\n| game | moves | ply-bot instances | runs (s) | median (s) |\n|---|---|---|---|---|\n");
  for (int instances : {1, 2}) {
    std::vector<std::unique_ptr<ServerProcess>> bots;
    std::vector<std::string> addresses;
    for (int i = 0; i < instances; ++i) {
      auto bot = ServerProcess::Start(PLY_BOT_BINARY,
                                      {"--port=0", "--host=127.0.0.1", "--workers=1", "--queue=16",
                                       "--log_level=error", absl::StrCat("--instance=bot", i)});
      if (!bot.ok()) return 1;
      addresses.push_back((*bot)->address());
      bots.push_back(*std::move(bot));
    }
    for (const Case& c : cases) {
      std::vector<double> times;
      for (int run = 0; run < absl::GetFlag(FLAGS_runs); ++run) {
        auto url = (*cluster)->CreateDatabase(absl::StrCat("bench_", ++database));
        if (!url.ok()) return 1;
        auto lobby = ServerProcess::Start(
            PLY_LOBBY_BINARY,
            {"--port=0", "--host=127.0.0.1", absl::StrCat("--database_url=", *url),
             absl::StrCat("--bot_target=ipv4:", absl::StrJoin(addresses, ",")),
             absl::StrCat("--analysis_ms=", absl::GetFlag(FLAGS_analysis_ms)),
             absl::StrCat("--analysis_parallel=", absl::GetFlag(FLAGS_analysis_parallel))});
        if (!lobby.ok()) return 1;
        auto stub = v1::LobbyService::NewStub((*lobby)->channel());
        absl::StatusOr<int64_t> id = FinishedMatch(stub.get(), c.game, c.moves);
        if (!id.ok()) return 1;
        absl::StatusOr<double> seconds = AnalyseSeconds(stub.get(), *id);
        if (!seconds.ok()) {
          std::fprintf(stderr, "%s\n", std::string(seconds.status().message()).c_str());
          return 1;
        }
        times.push_back(*seconds);
      }
      std::vector<std::string> texts;
      for (double t : times) texts.push_back(absl::StrCat(absl::SixDigits(t)));
      std::sort(times.begin(), times.end());
      std::printf("| %s | %zu | %d | %s | %.1f |\n", c.game.c_str(), c.moves.size(), instances,
                  absl::StrJoin(texts, ", ").c_str(), times[times.size() / 2]);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace ply

int main(int argc, char** argv) {
  ply::SetFlagsUsage(
      "how long the lobby takes to analyse a match, with one and with two ply-bot instances\n"
      "  analysis_bench [--runs N] [--analysis_ms MS] [--analysis_parallel N]");
  ply::ParseFlags(argc, argv);
  return ply::Main();
}
