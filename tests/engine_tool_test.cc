// ply-engine as scripts use it: the real binary, its last lines and its JSON.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace {

struct ToolRun {
  int exit_code;
  std::string out;
};

ToolRun RunTool(const std::string& args) {
  std::string command = std::string(PLY_ENGINE_BINARY) + " " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  ToolRun run{-1, ""};
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - start);
}

// The search's node-count signature is recorded in tests/bench_signature.txt; a change to it
// must be recorded on purpose (the file says how).
TEST(EngineTool, BenchSignatureMatchesTheRecordedValue) {
  std::ifstream in(PLY_BENCH_SIGNATURE_FILE);
  ASSERT_TRUE(in) << PLY_BENCH_SIGNATURE_FILE;
  std::string line;
  uint64_t recorded = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') recorded = std::stoull(line);
  }
  ToolRun r = RunTool("bench --signature-only --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["signature"].get<uint64_t>(), recorded)
      << "the search changed: if that is meant, record the new signature in "
      << PLY_BENCH_SIGNATURE_FILE;
}

TEST(EngineTool, PerftPrintsTheCountLast) {
  ToolRun r = RunTool("perft connect4 5");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(LastLine(r.out), "16807");
  ToolRun cyl = RunTool("perft connect4 4 --opt width=6 --opt height=5,cylinder=true");
  EXPECT_EQ(LastLine(cyl.out), "1296");
  ToolRun moves = RunTool("perft tictactoe 2 --moves \"b2 a1\"");
  EXPECT_EQ(LastLine(moves.out), "42");
}

TEST(EngineTool, AnalyzeJsonHasTheDocumentedFields) {
  ToolRun r = RunTool("analyze connect4 --moves \"4 4 4 4 3 3 5\" --depth 6 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"move", "score", "depth", "nodes", "nps", "pv", "exact"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  // X has three on the bottom row open at both ends: O cannot block both, and the search
  // stops as soon as that is proven.
  EXPECT_LE(j["depth"].get<int>(), 6);
  EXPECT_TRUE(j["exact"].get<bool>());
  EXPECT_LT(j["score"].get<int>(), 0);
}

TEST(EngineTool, SolvePrintsTheTestSetScore) {
  ToolRun r = RunTool("solve connect4 2252576253462244111563365343671351441");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(LastLine(r.out), "-1");
}

TEST(EngineTool, GamesListsEveryGameInJson) {
  ToolRun r = RunTool("games --json");
  ASSERT_EQ(r.exit_code, 0);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["games"].is_array());
  bool has_connect4 = false;
  for (const auto& g : j["games"]) has_connect4 |= g["name"] == "connect4";
  EXPECT_TRUE(has_connect4);
}

TEST(EngineTool, BadInputGetsAnErrorAndANonZeroExit) {
  EXPECT_NE(RunTool("perft chess 3").exit_code, 0);
  EXPECT_NE(RunTool("perft connect4 3 --moves \"4 9\"").exit_code, 0);
  EXPECT_NE(RunTool("analyze connect4 --level godlike").exit_code, 0);
  EXPECT_NE(RunTool("frobnicate").exit_code, 0);
  ToolRun json = RunTool("perft connect4 3 --moves \"4 9\" --json");
  auto j = nlohmann::json::parse(json.out);
  EXPECT_NE(j["error"].get<std::string>().find("move 2"), std::string::npos);
}

TEST(EngineTool, MatchReportsAnEloDifference) {
  ToolRun r = RunTool("match tictactoe --a hard --b beginner --games 4 --time-ms 50 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["games"], 4);
  EXPECT_TRUE(j.contains("elo"));
  EXPECT_EQ(j["wins"].get<int>() + j["draws"].get<int>() + j["losses"].get<int>(), 4);
  // The numbers are those of the line: for a sweep no estimate and only the bound it gives.
  const int wins = j["wins"].get<int>(), draws = j["draws"].get<int>();
  const std::string text = j["elo_text"].get<std::string>();
  if (wins == 4) {
    EXPECT_TRUE(j["elo"].is_null()) << j.dump();
    EXPECT_TRUE(j["elo_high"].is_null()) << j.dump();
    EXPECT_NE(text.find(absl::StrFormat("at least %+.0f", j["elo_low"].get<double>())),
              std::string::npos)
        << j.dump();
  } else if (wins + draws > 0) {
    EXPECT_NE(text.find(absl::StrFormat("Elo %+.0f", j["elo"].get<double>())), std::string::npos)
        << j.dump();
  }
}

TEST(EngineTool, AOneGameMatchPrintsAFiniteEloLine) {
  // The Elo line is pbrain-match's (EloSummary): no "+- inf" however few the games.
  ToolRun r = RunTool("match tictactoe --a hard --b beginner --games 1 --time-ms 50");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("score "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  Elo"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(95%: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("inf"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Elo Elo"), std::string::npos) << r.out;
}

// The edge reply to the centre loses Tic-Tac-Toe: the solver proves it, so the judgement is exact.
TEST(EngineTool, AnalyzeGameMarksAProvenLossABlunder) {
  ToolRun r = RunTool("analyze-game tictactoe --moves \"b2 b1 a1\" --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["moves"].size(), 3u) << r.out;
  const auto& edge = j["moves"][1];
  EXPECT_EQ(edge["ply"], 2);
  EXPECT_EQ(edge["move"], "b1");
  EXPECT_EQ(edge["mark"], "blunder");
  EXPECT_TRUE(edge["exact_verdict"].get<bool>());
  EXPECT_EQ(edge["after_text"], "loss in 6");
  ASSERT_EQ(j["players"].size(), 2u);
  EXPECT_EQ(j["players"][0]["blunders"], 0);
  EXPECT_EQ(j["players"][1]["blunders"], 1);
  EXPECT_EQ(j["players"][1]["moves"], 1);

  ToolRun text = RunTool("analyze-game tictactoe --moves \"b2 b1 a1\"");
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("2. b1     ??"), std::string::npos) << text.out;
  EXPECT_NE(LastLine(text.out).find("1 blunder in 1 move"), std::string::npos) << text.out;

  ToolRun bad = RunTool("analyze-game tictactoe --moves \"b2 z9\" --json");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(nlohmann::json::parse(bad.out)["error"].get<std::string>().find("move 2"),
            std::string::npos)
      << bad.out;
}

TEST(EngineTool, ErrorRatesGivesEachLevelItsOwnRow) {
  ToolRun r = RunTool(
      "error-rates tictactoe --levels beginner,hard --b medium --games 2 --nodes 5000 "
      "--judge-depth 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["opponent"], "medium");
  ASSERT_EQ(j["levels"].size(), 2u) << r.out;
  EXPECT_EQ(j["levels"][0]["level"], "beginner");
  EXPECT_EQ(j["levels"][1]["level"], "hard");
  for (const auto& row : j["levels"]) {
    EXPECT_EQ(row["games"], 2);
    EXPECT_GT(row["moves"].get<int>(), 0);
    EXPECT_GE(row["accuracy"].get<double>(), 0);
    EXPECT_LE(row["accuracy"].get<double>(), 100);
  }
}

// Moves with spaces (as `analyze --moves` takes them) are the same position as the digits.
TEST(EngineTool, SolveTakesMovesWithSpacesAsAnalyzeWritesThem) {
  const std::string digits = "2252576253462244111563365343671351441";
  const std::string spaced = absl::StrJoin(absl::StrSplit(digits, ""), " ");
  ToolRun r = RunTool("solve connect4 \"" + spaced + "\"");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(LastLine(r.out), "-1");
  r = RunTool("solve connect4 " + spaced);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(LastLine(r.out), "-1");
}

// The book is written only where --out says: its default was the shipped book, which any run
// from the repository's root rewrote.
TEST(EngineTool, BookNeedsOutNamed) {
  ToolRun r = RunTool("book connect4 --max-ply 1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

// Without --out the header is printed; with one it is written there.
TEST(EngineTool, FitWinChanceWritesTheGameHeaderToOut) {
  const std::string flags =
      "fit-winchance connect4 --a beginner --b medium --games 8 --nodes 2000 --judge-depth 3 "
      "--judge-ms 50";
  ToolRun json = RunTool(flags + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  auto j = nlohmann::json::parse(json.out);
  // Eight games: the book proves every position of the first four plies, so two or four games
  // left only scores that each predicted its result and nothing to fit.
  EXPECT_EQ(j["games"], 8);
  EXPECT_GT(j["samples"].get<int>(), 0);
  EXPECT_GT(j["scale"].get<double>(), 0);
  // How well it fits, beside the scale.
  EXPECT_GT(j["log_loss"].get<double>(), 0);
  EXPECT_LE(j["scale_low"].get<double>(), j["scale"].get<double>());
  EXPECT_GE(j["scale_high"].get<double>(), j["scale"].get<double>());
  EXPECT_EQ(j["bins"].size(), 6u);

  const std::string path = ::testing::TempDir() + "engine_tool_win_chance.h";
  std::remove(path.c_str());
  ToolRun written = RunTool(flags + " --out " + path);
  ASSERT_EQ(written.exit_code, 0) << written.out;
  EXPECT_NE(written.out.find("written to " + path), std::string::npos) << written.out;
  std::ifstream in(path);
  std::string header((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The name connect4.h reads as its kWinChance, and the engine's core type (a game's folder does
  // not include analysis).
  EXPECT_NE(header.find("inline constexpr WinChanceCurve kConnect4WinChance"), std::string::npos)
      << header;
  EXPECT_NE(header.find("// fit: log-loss "), std::string::npos) << header;
  EXPECT_NE(header.find("#include \"engine/core/win_chance_curve.h\""), std::string::npos)
      << header;
  std::remove(path.c_str());
}

}  // namespace
