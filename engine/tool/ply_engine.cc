// ply-engine: the engine from the command line, for people and scripts. Every subcommand takes
// --json for one machine-readable JSON object on stdout.
//
//   ply-engine games
//   ply-engine perft GAME DEPTH [--opt k=v ...] [--moves "M1 M2 ..."]
//   ply-engine analyze GAME [--opt ...] [--moves ...] [--level L | --depth D | --time-ms T |
//                           --nodes N]
//   ply-engine solve connect4 MOVES
//   ply-engine book connect4 [--max-ply N] [--every-position-to-ply K] [--book-from FILE]
//                            [--threads N] --out FILE
//   ply-engine match GAME --a LEVEL --b LEVEL --games N [--seed S]
//   ply-engine ladder GAME [--games N] [--time-ms T | --nodes-per-ms R] [--ladder-out FILE]
//   ply-engine bench [GAME ...] [--signature-only]
//   ply-engine analyze-game GAME --moves "M1 M2 ..." [--judge-ms T] [--judge-depth D]
//   ply-engine fit-winchance GAME [--games N --a LEVEL --b LEVEL --time-ms T] [--out FILE]
//   ply-engine error-rates GAME [--levels L1,L2 --b LEVEL --games N --time-ms T]
//   ply-engine demo [GAME] [--a LEVEL --b LEVEL]
// analyze-game, fit-winchance and error-rates are in ply_engine_analysis.cc. Every flag is defined
// here, beside main; ply_engine_flags.h declares the ones read in other files.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/core/flags_usage.h"
#include "engine/core/random.h"
#include "engine/core/text.h"
#include "engine/games/connect4/book.h"
#include "engine/registry/registry.h"
#include "engine/search/tt.h"
#include "engine/tool/ladder.h"
#include "engine/tool/match.h"
#include "engine/tool/ply_engine_analysis.h"
#include "engine/tool/ply_engine_flags.h"
#include "engine/tool/solve.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(bool, json, false, "print one JSON object instead of text");
ABSL_FLAG(std::string, moves, "", "moves from the initial position, separated by spaces or commas");
ABSL_FLAG(std::string, level, "", "difficulty level (analyze: default hard)");
ABSL_FLAG(int, depth, 0, "search depth cap");
ABSL_FLAG(int64_t, time_ms, 0, "time budget per move in milliseconds");
ABSL_FLAG(int64_t, nodes, 0, "node budget per move");
ABSL_FLAG(uint64_t, seed, 1, "random seed (level noise, openings)");
ABSL_FLAG(std::string, a, "hard", "match/demo: level of the first engine");
ABSL_FLAG(std::string, b, "medium", "match/demo: level of the second engine");
ABSL_FLAG(int, games, 10, "match: number of games (colours alternate)");
ABSL_FLAG(int, opening_plies, 2, "match: random plies before the engines take over");
ABSL_FLAG(int, tt_mb, 64, "transposition table size in MiB");
ABSL_FLAG(int, max_ply, 11, "book: the last ply at which the perfect level looks moves up");
ABSL_FLAG(int, every_position_to_ply, -1,
          "book: also every position up to this ply, whatever the moves before it (-1: none)");
ABSL_FLAG(int, threads, 1,
          "book: solvers at work at once, each with its own --tt-mb table (the book is the same)");
ABSL_FLAG(std::string, book_from, "",
          "book: start from this book's entries (not solved again), e.g. the shipped one, or the "
          "--out of a run that was stopped (it goes on where that one stopped)");
ABSL_FLAG(std::string, out, "",
          "book: the file to write, named always (rewritten after each ply and every "
          "--checkpoint-s during a long one, so a stopped run keeps what it solved; the shipped "
          "book is engine/games/connect4/book_7x6.txt); fit-winchance: the header to write");
ABSL_FLAG(double, checkpoint_s, 60,
          "book: how often a ply still being solved rewrites --out and reports (seconds)");
ABSL_FLAG(int64_t, nodes_per_ms, 0,
          "ladder: think for a node budget, each level's own time_ms times this, instead of a "
          "clock (the same games however busy the machine is)");
ABSL_FLAG(std::string, ladder_out, "",
          "ladder: also write the result as the game's ladder file (games/GAME/ladder.txt)");
ABSL_FLAG(int, bench_ms, 1000, "bench: time per position for the depth-in-time measurement");
ABSL_FLAG(int64_t, judge_ms, 200,
          "fit-winchance/error-rates/analyze-game: time to judge each position, in milliseconds");
ABSL_FLAG(int, judge_depth, 0, "fit-winchance/error-rates/analyze-game: depth cap when judging");
ABSL_FLAG(std::string, levels, "beginner,easy,medium,hard", "error-rates: the levels to measure");
ABSL_FLAG(bool, signature_only, false,
          "bench: only the fixed-depth node counts (deterministic; what `make test` compares)");

namespace ply {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

// The helpers ply_engine_flags.h shares with the other subcommand files.
int Fail(const absl::Status& status) {
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << Json{{"error", std::string(status.message())},
                      {"code", absl::StatusCodeToString(status.code())}}
                     .dump()
              << "\n";
  } else {
    std::cerr << "ply-engine: " << status.message() << "\n";
  }
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

int Usage(const std::string& why) {
  std::cerr << "ply-engine: " << why << "\n\n" << absl::ProgramUsageMessage() << "\n";
  return 2;
}

std::vector<std::string> SplitMoves(std::string_view text) {
  std::vector<std::string> moves;
  for (absl::string_view m : absl::StrSplit(Absl(text), absl::ByAnyChar(" ,"), absl::SkipEmpty())) {
    moves.emplace_back(m);
  }
  return moves;
}

MatchConfig MatchConfigFromFlags(const std::string& game, const GameOptions& options) {
  return MatchConfig{.game = game,
                     .options = options,
                     .level_a = absl::GetFlag(FLAGS_a),
                     .level_b = absl::GetFlag(FLAGS_b),
                     .games = absl::GetFlag(FLAGS_games),
                     .seed = absl::GetFlag(FLAGS_seed),
                     .opening_plies = absl::GetFlag(FLAGS_opening_plies),
                     .time_ms = absl::GetFlag(FLAGS_time_ms),
                     .max_nodes = absl::GetFlag(FLAGS_nodes),
                     .tt_megabytes = static_cast<size_t>(absl::GetFlag(FLAGS_tt_mb))};
}

namespace {

// --opt may repeat (`--opt width=6 --opt height=5`) and each may hold several
// (`--opt width=6,height=5`); absl flags keep only the last, so they are taken out first.
// Flag names may be spelled with dashes (`--time-ms`) as well as underscores.
std::vector<std::string> TakeOptFlags(int& argc, char** argv, std::vector<std::string>& storage) {
  std::vector<std::string> opts;
  storage.reserve(argc);
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--opt" && i + 1 < argc) {
      opts.push_back(argv[++i]);
      continue;
    }
    if (arg.rfind("--opt=", 0) == 0) {
      opts.push_back(arg.substr(6));
      continue;
    }
    if (arg.rfind("--", 0) == 0) {
      size_t end = std::min(arg.find('='), arg.size());
      for (size_t j = 2; j < end; ++j) {
        if (arg[j] == '-') arg[j] = '_';
      }
      storage.push_back(arg);
      argv[out++] = storage.back().data();
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  return opts;
}

absl::StatusOr<GameOptions> CollectOptions(const std::vector<std::string>& opt_flags) {
  GameOptions options;
  for (const std::string& text : opt_flags) {
    absl::StatusOr<GameOptions> parsed = ParseOptions(text);
    if (!parsed.ok()) return parsed.status();
    for (auto& [k, v] : *parsed) options[k] = v;
  }
  return options;
}

absl::StatusOr<std::unique_ptr<AnyGame>> LoadPosition(const std::string& name,
                                                      const GameOptions& options) {
  return ReplayGame(name, options, SplitMoves(absl::GetFlag(FLAGS_moves)));
}

Json ReportJson(const SearchReport& r) {
  return Json{{"move", r.move},
              {"score", r.score},
              {"score_text", r.ScoreText()},
              {"depth", r.depth},
              {"nodes", r.nodes},
              {"nps", static_cast<int64_t>(r.nodes_per_second)},
              {"time_ms", r.elapsed_ms},
              {"pv", r.pv},
              {"exact", r.exact},
              {"outcome_only", r.outcome_only},
              {"random", r.random_move}};
}

// " (exact)" after a proven score; nothing after a proven outcome without its margin, whose
// text ("win (proven)") says so already.
std::string_view ExactMark(const SearchReport& r) {
  return r.exact && !r.outcome_only ? " (exact)" : "";
}

int Games() {
  if (absl::GetFlag(FLAGS_json)) {
    Json games = Json::array();
    for (const GameInfo& g : ListGames()) {
      Json options = Json::array();
      for (const OptionInfo& o : g.options) {
        options.push_back(
            {{"name", o.name}, {"default", o.default_value}, {"description", o.description}});
      }
      Json levels = Json::array();
      for (const Difficulty& d : g.levels) {
        levels.push_back({{"name", d.name},
                          {"max_depth", d.max_depth},
                          {"random_move_chance", d.random_move_chance},
                          {"eval_noise", d.eval_noise},
                          {"time_ms", d.time_ms},
                          {"perfect", d.perfect},
                          {"description", d.description}});
      }
      games.push_back({{"name", g.name},
                       {"title", g.title},
                       {"description", g.description},
                       {"players", g.player_names},
                       {"options", options},
                       {"levels", levels}});
    }
    std::cout << Json{{"games", games}}.dump() << "\n";
    return 0;
  }
  for (const GameInfo& g : ListGames()) {
    std::cout << g.name << " - " << g.title << ": " << g.description << "\n";
    std::cout << "  players: " << absl::StrJoin(g.player_names, " (first), ") << "\n";
    for (const OptionInfo& o : g.options) {
      std::cout << "  option " << o.name << " (default " << o.default_value
                << "): " << o.description << "\n";
    }
    for (const Difficulty& d : g.levels) {
      std::cout << absl::StrFormat(
          "  level %-9s depth %-3s random %3.0f%%  noise %-4d %5d ms  %s\n", d.name,
          d.max_depth == 0 ? "-" : std::to_string(d.max_depth), d.random_move_chance * 100,
          d.eval_noise, d.time_ms, d.description);
    }
  }
  return 0;
}

int Perft(const std::vector<std::string>& args, const GameOptions& options) {
  if (args.size() != 2) return Usage("perft needs GAME and DEPTH");
  int depth = 0;
  if (!ParseInt(args[1], &depth) || depth < 0 || depth > 64) {
    return Usage("DEPTH must be an integer 0..64");
  }
  auto game = LoadPosition(args[0], options);
  if (!game.ok()) return Fail(game.status());
  auto start = std::chrono::steady_clock::now();
  uint64_t count = (*game)->Perft(depth);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << Json{{"game", args[0]}, {"depth", depth}, {"count", count}, {"time_ms", ms}}.dump()
              << "\n";
  } else {
    std::cout << absl::StrFormat("perft %s depth %d: %.1f ms\n", args[0], depth, ms);
    std::cout << count << "\n";
  }
  return 0;
}

// The request for analyze/demo: a level (default hard) tightened by --depth/--time-ms/--nodes.
absl::StatusOr<SearchRequest> RequestFromFlags(const GameInfo& info, std::string level_name) {
  bool explicit_limit = absl::GetFlag(FLAGS_depth) > 0 || absl::GetFlag(FLAGS_time_ms) > 0 ||
                        absl::GetFlag(FLAGS_nodes) > 0;
  SearchRequest request;
  if (level_name.empty() && explicit_limit) {
    // Pure limits: no level dials, no time cap unless asked for.
    request.level = Difficulty{.name = "custom", .time_ms = 0};
  } else {
    if (level_name.empty()) level_name = "hard";
    const Difficulty* level = FindLevel(info.levels, level_name);
    if (level == nullptr) {
      std::vector<std::string> names;
      for (const Difficulty& d : info.levels) names.push_back(d.name);
      return absl::InvalidArgumentError(absl::StrCat("unknown level '", level_name, "' for ",
                                                     info.name,
                                                     " (known: ", absl::StrJoin(names, ", "), ")"));
    }
    request.level = *level;
  }
  request.max_depth = absl::GetFlag(FLAGS_depth);
  request.time_ms = absl::GetFlag(FLAGS_time_ms);
  request.max_nodes = absl::GetFlag(FLAGS_nodes);
  request.seed = absl::GetFlag(FLAGS_seed);
  return request;
}

int Analyze(const std::vector<std::string>& args, const GameOptions& options) {
  if (args.size() != 1) return Usage("analyze needs GAME");
  auto game = LoadPosition(args[0], options);
  if (!game.ok()) return Fail(game.status());
  auto request = RequestFromFlags((*game)->Info(), absl::GetFlag(FLAGS_level));
  if (!request.ok()) return Fail(request.status());
  bool json = absl::GetFlag(FLAGS_json);
  if (!json) {
    std::cout << (*game)->Render();
    request->on_iteration = [](const SearchReport& r) {
      std::cout << absl::StrFormat("depth %2d  score %-10s nodes %12d  %8.1f ms  pv %s\n", r.depth,
                                   r.ScoreText(), r.nodes, r.elapsed_ms, absl::StrJoin(r.pv, " "));
    };
  }
  SearchCache cache(absl::GetFlag(FLAGS_tt_mb));
  auto report = (*game)->ChooseMove(*request, &cache);
  if (!report.ok()) return Fail(report.status());
  if (json) {
    std::cout << ReportJson(*report).dump() << "\n";
  } else {
    std::cout << absl::StrFormat(
        "best %s  score %s%s  depth %d  nodes %d  %.0f nodes/s  %.1f ms\npv %s\n", report->move,
        report->ScoreText(), ExactMark(*report), report->depth, report->nodes,
        report->nodes_per_second, report->elapsed_ms, absl::StrJoin(report->pv, " "));
  }
  return 0;
}

int Solve(const std::vector<std::string>& args, const GameOptions& options) {
  if (args.empty()) return Usage("solve needs GAME and a position");
  absl::StatusOr<std::string> out =
      SolveCommand(args, options, absl::GetFlag(FLAGS_json),
                   {.time_ms = absl::GetFlag(FLAGS_time_ms),
                    .max_nodes = absl::GetFlag(FLAGS_nodes),
                    .tt_megabytes = static_cast<size_t>(absl::GetFlag(FLAGS_tt_mb))});
  if (!out.ok()) return Fail(out.status());
  std::cout << *out;
  return 0;
}

// Builds Connect Four's opening book with the exact solver (book.h says which positions) and
// writes it to --out after every ply and every --checkpoint-s within one, with a line each on
// stderr.
int Book(const std::vector<std::string>& args) {
  if (args.size() != 1 || args[0] != "connect4") return Usage("book needs GAME: connect4");
  const std::string path = absl::GetFlag(FLAGS_out);
  // A default of the shipped book rewrote it from any run at the repository's root, a
  // test run of a few plies included.
  if (path.empty()) {
    return Usage(
        "book needs --out FILE (to replace the shipped book, --out "
        "engine/games/connect4/book_7x6.txt)");
  }
  const auto start = std::chrono::steady_clock::now();
  if (absl::GetFlag(FLAGS_checkpoint_s) < 0) return Usage("--checkpoint-s must be 0 or more");
  absl::Status written = absl::OkStatus();
  // Written beside and renamed over, so that a run stopped while it writes leaves the last whole
  // file, never a cut one (a cut score would go into a resumed book unchecked).
  auto write = [&](const std::string& text) {
    const std::string temporary = path + ".part";
    {
      std::ofstream out(temporary, std::ios::trunc);
      out << text;
      out.close();
      if (out && std::rename(temporary.c_str(), path.c_str()) == 0) return;
    }
    if (written.ok()) {
      written = absl::UnavailableError(absl::StrCat("cannot write ", path));
      std::cerr << written.message() << ": the build goes on, but nothing it solves is kept\n";
    }
  };
  std::optional<connect4::OpeningBook> start_book;
  if (const std::string from = absl::GetFlag(FLAGS_book_from); !from.empty()) {
    std::ifstream in(from);
    std::stringstream contents;
    contents << in.rdbuf();
    if (!in) return Fail(absl::NotFoundError(absl::StrCat("cannot read ", from)));
    absl::StatusOr<connect4::OpeningBook> parsed = connect4::OpeningBook::Parse(contents.str());
    if (!parsed.ok()) return Fail(parsed.status());
    start_book = *std::move(parsed);
  }
  absl::StatusOr<std::string> text = connect4::BuildBook(
      {.max_ply = absl::GetFlag(FLAGS_max_ply),
       .every_position_to_ply = absl::GetFlag(FLAGS_every_position_to_ply),
       .tt_megabytes = static_cast<size_t>(absl::GetFlag(FLAGS_tt_mb)),
       .threads = absl::GetFlag(FLAGS_threads),
       .start = start_book ? &*start_book : nullptr,
       .checkpoint_seconds = absl::GetFlag(FLAGS_checkpoint_s)},
      [&](std::string_view part, int ply, int positions, double seconds,
          const std::string& so_far) {
        write(so_far);
        const double total =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::cerr << absl::StrFormat("%s, ply %2d: %6d positions  %8.1f s  (total %.1f s)\n", part,
                                     ply, positions, seconds, total);
      });
  if (!text.ok()) return Fail(text.status());
  write(*text);
  if (!written.ok()) return Fail(written);
  std::cout << path << "\n";
  return 0;
}

int Match(const std::vector<std::string>& args, const GameOptions& options) {
  if (args.size() != 1) return Usage("match needs GAME");
  MatchConfig config = MatchConfigFromFlags(args[0], options);
  bool json = absl::GetFlag(FLAGS_json);
  int n = 0;
  auto result = RunMatch(config, [&](const GameRecord& r) {
    ++n;
    if (!json) {
      std::cout << absl::StrFormat("game %3d  %s as %s: %-4s (%s, %d moves)\n", n, config.level_a,
                                   r.a_player == 0 ? "first " : "second",
                                   r.result_for_a > 0   ? "win"
                                   : r.result_for_a < 0 ? "loss"
                                                        : "draw",
                                   r.reason, r.moves.size());
      std::cout.flush();
    }
  });
  if (!result.ok()) return Fail(result.status());
  if (json) {
    // The same numbers as the line: none that the line does not give.
    const EloRange elo = EloEstimate(result->wins, result->draws, result->losses);
    auto OrNull = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
    std::cout << Json{{"game", config.game},          {"a", config.level_a},
                      {"b", config.level_b},          {"games", result->games()},
                      {"wins", result->wins},         {"draws", result->draws},
                      {"losses", result->losses},     {"score", result->Score()},
                      {"elo", OrNull(elo.estimate)},  {"elo_low", OrNull(elo.low)},
                      {"elo_high", OrNull(elo.high)}, {"elo_text", result->EloText()}}
                     .dump()
              << "\n";
  } else {
    std::cout << absl::StrFormat("%s vs %s in %s: +%d =%d -%d  score %.1f%%  %s\n", config.level_a,
                                 config.level_b, config.game, result->wins, result->draws,
                                 result->losses, 100 * result->Score(), result->EloText());
  }
  return 0;
}

// The command line that reproduces a ladder run, for the ladder file.
std::string LadderCommand(const LadderConfig& config, const std::string& out) {
  std::string command = absl::StrCat("build/engine/ply-engine ladder ", config.game);
  for (const auto& [name, value] : config.options) {
    absl::StrAppend(&command, " --opt ", name, "=", value);
  }
  absl::StrAppend(&command, " --games ", config.games);
  if (config.seed != 1) absl::StrAppend(&command, " --seed ", config.seed);
  if (config.opening_plies != 2)
    absl::StrAppend(&command, " --opening-plies ", config.opening_plies);
  if (config.nodes_per_ms > 0) absl::StrAppend(&command, " --nodes-per-ms ", config.nodes_per_ms);
  if (config.time_ms > 0) absl::StrAppend(&command, " --time-ms ", config.time_ms);
  if (config.tt_megabytes != 64) absl::StrAppend(&command, " --tt-mb ", config.tt_megabytes);
  if (!out.empty()) absl::StrAppend(&command, " --ladder-out ", out);
  return command;
}

// Every level of a game on one rating scale, anchored to a random mover (see ladder.h).
int Ladder(const std::vector<std::string>& args, const GameOptions& options) {
  if (args.size() != 1) return Usage("ladder needs GAME");
  const bool json = absl::GetFlag(FLAGS_json);
  LadderConfig config{.game = args[0],
                      .options = options,
                      .games = absl::GetFlag(FLAGS_games),
                      .seed = absl::GetFlag(FLAGS_seed),
                      .opening_plies = absl::GetFlag(FLAGS_opening_plies),
                      .time_ms = absl::GetFlag(FLAGS_time_ms),
                      .nodes_per_ms = absl::GetFlag(FLAGS_nodes_per_ms),
                      .tt_megabytes = static_cast<size_t>(absl::GetFlag(FLAGS_tt_mb))};
  if (config.time_ms > 0 && config.nodes_per_ms > 0) {
    return Usage("ladder takes --time-ms or --nodes-per-ms, not both");
  }
  const std::string out = absl::GetFlag(FLAGS_ladder_out);
  auto ratings =
      RunLadder(config, [&](const std::string& a, const std::string& b, const PairResult& r) {
        if (json) return;
        std::cout << absl::StrFormat("%-8s vs %-8s +%d =%d -%d\n", a, b, r.wins, r.draws, r.losses);
        std::cout.flush();
      });
  if (!ratings.ok()) return Fail(ratings.status());
  const LadderData data{
      .command = LadderCommand(config, out),
      .levels = LevelsFingerprint(FindGame(config.game)->levels,
                                  FindGame(config.game)->budget_plans, config.nodes_per_ms),
      .ratings = *ratings};
  if (!out.empty()) {
    std::ofstream file(out);
    file << FormatLadder(data, config.game);
    if (!file.flush()) return Fail(absl::UnavailableError(absl::StrCat("cannot write ", out)));
  }
  if (json) {
    Json list = Json::array();
    for (const LadderRating& r : *ratings) {
      list.push_back(
          {{"level", r.name}, {"rating", r.rating}, {"error", r.error}, {"games", r.games}});
    }
    std::cout << Json{{"game", config.game},
                      {"anchor", "random"},
                      {"command", data.command},
                      {"ratings", list}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << absl::StrFormat("\n%-8s %7s %8s %6s\n", "level", "rating", "95%", "games");
  for (const LadderRating& r : *ratings) {
    std::cout << absl::StrFormat("%-8s %7.0f %8s %6d\n", r.name, r.rating,
                                 r.error > 0 ? absl::StrFormat("+- %.0f", r.error) : "anchor",
                                 r.games);
  }
  return 0;
}

// Positions for `bench`: the initial position and one a few plies in, reached by a fixed
// pseudo-random line, for every game (or the ones named).
int Bench(const std::vector<std::string>& args) {
  bool json = absl::GetFlag(FLAGS_json);
  int64_t bench_ms = absl::GetFlag(FLAGS_bench_ms);
  bool signature_only = absl::GetFlag(FLAGS_signature_only);
  Json rows = Json::array();
  uint64_t signature_total = 0;
  if (!json) {
    std::cout << absl::StrFormat("%-10s %-5s %14s %10s %12s %10s\n", "game", "ply", "nodes/s",
                                 "depth/1s", "signature", "sig.depth");
  }
  for (const GameInfo& info : ListGames()) {
    if (!args.empty() && std::find(args.begin(), args.end(), info.name) == args.end()) continue;
    for (int plies : {0, 6}) {
      auto game = CreateGame(info.name);
      if (!game.ok()) return Fail(game.status());
      Rng rng(12345);
      for (int i = 0; i < plies && !(*game)->Status().over; ++i) {
        std::vector<std::string> legal = (*game)->LegalMoves();
        std::string m = legal[rng.Below(legal.size())];
        (void)(*game)->Play(m);
        if ((*game)->Status().over) (void)(*game)->Undo();
      }
      // Speed: the deepest iteration finished within the time budget, fresh tables.
      SearchReport timed;
      if (!signature_only) {
        SearchCache timed_cache(absl::GetFlag(FLAGS_tt_mb));
        Difficulty full{.name = "bench", .time_ms = static_cast<int>(bench_ms)};
        auto report = (*game)->ChooseMove({.level = full}, &timed_cache);
        if (!report.ok()) return Fail(report.status());
        timed = *report;
      }
      // Signature: nodes of a fixed-depth search, the first depth that needs >= 200k nodes
      // (or depth 64 / an exact result). It changes only when the search or the game changes.
      SearchCache sig_cache(16);
      int64_t signature = 0;
      int sig_depth = 0;
      for (int d = 1; d <= 64; ++d) {
        SearchCache fresh(16);
        auto r =
            (*game)->ChooseMove({.level = {.name = "sig", .time_ms = 0}, .max_depth = d}, &fresh);
        if (!r.ok()) return Fail(r.status());
        signature = r->nodes;
        sig_depth = d;
        if (r->nodes >= 200000 || r->exact) break;
      }
      signature_total += static_cast<uint64_t>(signature);
      if (json) {
        rows.push_back({{"game", info.name},
                        {"ply", plies},
                        {"nps", static_cast<int64_t>(timed.nodes_per_second)},
                        {"depth", timed.depth},
                        {"time_ms", timed.elapsed_ms},
                        {"signature", signature},
                        {"signature_depth", sig_depth}});
      } else {
        // --signature-only measures no speed: its columns say so rather than show zeros.
        std::string nps = signature_only ? "-" : absl::StrFormat("%.0f", timed.nodes_per_second);
        std::string depth = signature_only ? "-" : std::to_string(timed.depth);
        std::cout << absl::StrFormat("%-10s %-5d %14s %10s %12d %10d\n", info.name, plies, nps,
                                     depth, signature, sig_depth);
        std::cout.flush();
      }
    }
  }
  if (json) {
    std::cout << Json{{"positions", rows}, {"signature", signature_total}}.dump() << "\n";
  } else {
    std::cout << "signature " << signature_total << "\n";
  }
  return 0;
}

int Demo(const std::vector<std::string>& args, const GameOptions& options) {
  std::string name = args.empty() ? "connect4" : args[0];
  auto game = CreateGame(name, options);
  if (!game.ok()) return Fail(game.status());
  const GameInfo& info = (*game)->Info();
  std::string levels[2] = {absl::GetFlag(FLAGS_a), absl::GetFlag(FLAGS_b)};
  SearchRequest requests[2];
  for (int i = 0; i < 2; ++i) {
    auto r = RequestFromFlags(info, levels[i]);
    if (!r.ok()) return Fail(r.status());
    requests[i] = *r;
  }
  SearchCache caches[2] = {SearchCache(absl::GetFlag(FLAGS_tt_mb)),
                           SearchCache(absl::GetFlag(FLAGS_tt_mb))};
  std::cout << info.title << ": " << info.player_names[0] << " (" << levels[0] << ") vs "
            << info.player_names[1] << " (" << levels[1] << ")\n\n"
            << (*game)->Render() << "\n";
  Json moves = Json::array();
  bool json = absl::GetFlag(FLAGS_json);
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  while (!(*game)->Status().over) {
    int side = (*game)->SideToMove();
    requests[side].seed = seed++;
    auto report = (*game)->ChooseMove(requests[side], &caches[side]);
    if (!report.ok()) return Fail(report.status());
    absl::Status played = (*game)->Play(report->move);
    if (!played.ok()) return Fail(played);
    if (json) {
      Json m = ReportJson(*report);
      m["player"] = side;
      moves.push_back(m);
      continue;
    }
    std::cout << absl::StrFormat("%d. %s (%s) plays %s   depth %d  score %s%s  nodes %d  %.0f ms\n",
                                 static_cast<int>((*game)->History().size()),
                                 info.player_names[side], levels[side], report->move, report->depth,
                                 report->ScoreText(), ExactMark(*report), report->nodes,
                                 report->elapsed_ms);
    std::cout << (*game)->Render() << "\n";
    std::cout.flush();
  }
  GameStatus status = (*game)->Status();
  std::string result = status.winner < 0 ? "draw"
                                         : absl::StrCat(info.player_names[status.winner], " (",
                                                        levels[status.winner], ") wins");
  if (json) {
    std::cout << Json{{"game", name},
                      {"moves", moves},
                      {"result", result},
                      {"reason", status.reason},
                      {"record", (*game)->History()}}
                     .dump()
              << "\n";
  } else {
    std::cout << "Result: " << result << " (" << status.reason << ")\n";
    std::cout << "Record: " << absl::StrJoin((*game)->History(), " ") << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace ply

int main(int argc, char** argv) {
  ply::SetFlagsUsage(
      "the ply engine from the command line\n"
      "  ply-engine games\n"
      "  ply-engine perft GAME DEPTH [--opt k=v ...] [--moves \"M1 M2 ...\"]\n"
      "  ply-engine analyze GAME [--opt ...] [--moves ...] [--level L | --depth D | --time-ms T "
      "| --nodes N]\n"
      "  ply-engine solve connect4 MOVES       (exact score, test-set convention)\n"
      "  ply-engine solve reversi FILE.obf     (exact endgame scores)\n"
      "  ply-engine book connect4 [--max-ply N] [--every-position-to-ply K] [--book-from FILE]\n"
      "                   [--threads N] --out FILE [--checkpoint-s S]   (the perfect level's "
      "opening book)\n"
      "  ply-engine match GAME --a LEVEL --b LEVEL --games N [--seed S]\n"
      "  ply-engine ladder GAME [--games N per pairing] [--time-ms T | --nodes-per-ms R]\n"
      "                   [--ladder-out games/GAME/ladder.txt]   (every level's rating)\n"
      "  ply-engine bench [GAME ...] [--signature-only]\n"
      "  ply-engine analyze-game GAME --moves \"M1 M2 ...\" [--judge-ms T] [--judge-depth D]\n"
      "  ply-engine fit-winchance GAME [--games N --a L --b L --time-ms T] [--out FILE]\n"
      "  ply-engine error-rates GAME [--levels L1,L2,... --b L --games N --time-ms T]\n"
      "  ply-engine demo [GAME] [--a LEVEL --b LEVEL]\n"
      "every subcommand takes --json");
  std::vector<std::string> argv_words(argv, argv + argc);
  std::string command_line = absl::StrJoin(argv_words, " ");
  if (size_t slash = command_line.rfind('/', command_line.find(' ')); slash != std::string::npos) {
    command_line = command_line.substr(slash + 1);
  }
  std::vector<std::string> storage;
  std::vector<std::string> opt_flags = ply::TakeOptFlags(argc, argv, storage);
  std::vector<char*> rest = ply::ParseFlags(argc, argv);
  if (rest.size() < 2) return ply::Usage("no subcommand");
  std::string command = rest[1];
  std::vector<std::string> args(rest.begin() + 2, rest.end());
  auto options = ply::CollectOptions(opt_flags);
  if (!options.ok()) return ply::Fail(options.status());
  if (const int tt_mb = absl::GetFlag(FLAGS_tt_mb);
      tt_mb < 1 || static_cast<size_t>(tt_mb) > ply::kMaxTableMegabytes) {
    return ply::Usage(
        absl::StrCat("--tt-mb must be 1..", ply::kMaxTableMegabytes, " (MiB), not ", tt_mb));
  }
  if (command == "games") return ply::Games();
  if (command == "perft") return ply::Perft(args, *options);
  if (command == "analyze") return ply::Analyze(args, *options);
  if (command == "solve") return ply::Solve(args, *options);
  if (command == "match") return ply::Match(args, *options);
  if (command == "ladder") return ply::Ladder(args, *options);
  if (command == "book") return ply::Book(args);
  if (command == "bench") return ply::Bench(args);
  if (command == "demo") return ply::Demo(args, *options);
  if (command == "analyze-game") return ply::AnalyzeGameCommand(args, *options);
  if (command == "fit-winchance") return ply::FitWinChanceCommand(args, *options, command_line);
  if (command == "error-rates") return ply::ErrorRatesCommand(args, *options);
  return ply::Usage("unknown subcommand '" + command + "'");
}
