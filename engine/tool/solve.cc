#include "engine/tool/solve.h"

#include <cctype>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/games/connect4/connect4.h"
#include "engine/games/connect4/solver.h"
#include "engine/games/reversi/endgame.h"
#include "nlohmann/json.hpp"

namespace ply {
namespace {

using Json = nlohmann::ordered_json;

absl::StatusOr<std::string> SolveConnect4(const std::vector<std::string>& args,
                                          const GameOptions& options, bool json,
                                          const SolveLimits& limits) {
  absl::StatusOr<Connect4> shape = Connect4::Create(options);
  if (!shape.ok()) return shape.status();
  if (shape->cylinder() || !connect4::Solver::SupportsSize(shape->width(), shape->height())) {
    return absl::InvalidArgumentError("the solver handles plain boards only (no cylinder)");
  }
  // The test-set convention is one digit a move ("4453"); moves as `analyze --moves` writes
  // them ("4 4 5 3", or as separate arguments) are the same position.
  std::string moves;
  for (size_t i = 1; i < args.size(); ++i) {
    for (char ch : args[i]) {
      if (ch != ' ' && ch != '\t' && ch != ',') moves.push_back(ch);
    }
  }
  connect4::Solver solver(shape->width(), shape->height(), limits.tt_megabytes);
  absl::StatusOr<connect4::SolveResult> r =
      solver.SolveSequence(moves, {.max_nodes = limits.max_nodes, .time_ms = limits.time_ms});
  if (!r.ok()) return r.status();
  if (!r->solved) {
    return absl::DeadlineExceededError(
        absl::StrCat("not solved within the budget (", r->nodes, " nodes)"));
  }
  if (json) {
    return Json{{"game", "connect4"}, {"moves", moves},
                {"score", r->score},  {"best_move", r->best_column + 1},
                {"nodes", r->nodes},  {"time_ms", r->elapsed_ms}}
               .dump() +
           "\n";
  }
  return absl::StrFormat("best move %d  nodes %d  %.3f ms\n%d\n", r->best_column + 1, r->nodes,
                         r->elapsed_ms, r->score);
}

// FFO files are named for the numbers of their first and last positions ("ffo40-44.obf"): rows
// are numbered from the first number in the name, or 1.
int FirstNumberInName(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) return std::atoi(name.c_str() + i);
  }
  return 1;
}

absl::StatusOr<std::string> SolveReversi(const std::vector<std::string>& args, bool json,
                                         const SolveLimits& limits) {
  if (args.size() != 2) return absl::InvalidArgumentError("solve reversi needs an .obf FILE");
  absl::StatusOr<std::vector<reversi::ObfPosition>> positions = reversi::ReadObfFile(args[1]);
  if (!positions.ok()) return positions.status();
  reversi::EndgameSolver solver(limits.tt_megabytes);
  SearchLimits solver_limits{.max_nodes = limits.max_nodes, .time_ms = limits.time_ms};
  const int first = FirstNumberInName(args[1]);
  if (!json) {
    std::string out;
    reversi::SolveObfTable(*positions, first, solver, solver_limits,
                           [&out](const std::string& line) {
                             out += line;
                             out += '\n';
                           });
    return out;
  }
  Json rows = Json::array();
  int64_t nodes = 0;
  double ms = 0;
  for (size_t i = 0; i < positions->size(); ++i) {
    const reversi::ObfPosition& p = (*positions)[i];
    solver.Clear();
    reversi::EndgameResult r = solver.Solve(p.game, solver_limits);
    nodes += r.nodes;
    ms += r.elapsed_ms;
    std::string move = r.solved ? p.game.MoveToText(r.best_move) : "";
    bool right = r.solved && r.score == p.best_score &&
                 std::find(p.best_moves.begin(), p.best_moves.end(), move) != p.best_moves.end();
    rows.push_back({{"number", first + static_cast<int>(i)},
                    {"solved", r.solved},
                    {"score", r.score},
                    {"move", move},
                    {"expected_score", p.best_score},
                    {"expected_moves", p.best_moves},
                    {"correct", right},
                    {"nodes", r.nodes},
                    {"time_ms", r.elapsed_ms}});
  }
  return Json{{"game", "reversi"}, {"positions", rows}, {"nodes", nodes}, {"time_ms", ms}}.dump() +
         "\n";
}

}  // namespace

absl::StatusOr<std::string> SolveCommand(const std::vector<std::string>& args,
                                         const GameOptions& options, bool json,
                                         const SolveLimits& limits) {
  if (args[0] == "connect4") return SolveConnect4(args, options, json, limits);
  if (args[0] == "reversi") return SolveReversi(args, json, limits);
  return absl::InvalidArgumentError(
      absl::StrCat("no exact solver for '", args[0], "' (solvable: connect4, reversi)"));
}

}  // namespace ply
