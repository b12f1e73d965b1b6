// `--help` of every ply program that an operator or a developer runs from a shell. Abseil's
// --help lists only the flags of a file named after the program (ply-lobby.cc), which no ply
// program has, so each of them used to print "No flags matched", and Debian 12's Abseil exits
// with status 1 after any help it gives (engine/core/flags_usage.h).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>

#include "absl/base/config.h"

namespace {

struct Asked {
  int code = -1;
  std::string out;
};

Asked RunShell(const std::string& command) {
  Asked asked;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return asked;
  char chunk[4096];
  for (size_t n; (n = fread(chunk, 1, sizeof chunk, pipe)) > 0;) asked.out.append(chunk, n);
  const int status = pclose(pipe);
  asked.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return asked;
}

struct Program {
  const char* binary;
  const char* flags_file;  // where its own flags are, as --help names it
  const char* flag;        // one of them
};

TEST(ProgramHelp, EveryServerAndToolListsItsOwnFlags) {
  const Program programs[] = {
      {PLY_BOT_BINARY, "bot-service/main.cc", "--port"},
      {PLY_BOT_LOAD_BINARY, "bot-service/load.cc", "--background"},
      {PLY_LOBBY_BINARY, "lobby-server/main.cc", "--database_url"},
      {PLY_LOBBY_LOAD_BINARY, "lobby-server/load.cc", "--bot_matches"},
      {PLY_FAIR_PLAY_BINARY, "lobby-server/fair_play.cc", "--lobby2"},
      {PLY_WEB_BINARY, "client-web/main.cc", "--lobby"},
      {PBRAIN_MATCH_BINARY, "engine/tool/gomoku/pbrain_match_main.cc", "--opening_stones"},
      {PLY_ENGINE_BINARY, "engine/tool/ply_engine.cc", "--nodes"},
  };
  for (const Program& program : programs) {
    const Asked asked = RunShell(std::string(program.binary) + " --help");
    SCOPED_TRACE(program.binary);
    // Help asked for and given is a success (a script, a container's check); a flag that does
    // not exist is not. (ply::ParseFlags answers help itself with Debian 12's Abseil only.)
#if ABSL_LTS_RELEASE_VERSION == 20220623
    EXPECT_EQ(asked.code, 0) << asked.out;
    for (const char* also : {" --helpfull", " --help=port"}) {
      EXPECT_EQ(RunShell(std::string(program.binary) + also).code, 0) << also;
    }
#endif
    const Asked unknown = RunShell(std::string(program.binary) + " --no_such_flag");
    EXPECT_EQ(unknown.code, 1) << unknown.out;
    EXPECT_NE(unknown.out.find("no_such_flag"), std::string::npos) << unknown.out;
    EXPECT_EQ(asked.out.find("No flags matched"), std::string::npos) << asked.out;
    EXPECT_NE(asked.out.find(std::string("Flags from ") + program.flags_file + ":"),
              std::string::npos)
        << asked.out;
    EXPECT_NE(asked.out.find(std::string(program.flag) + " ("), std::string::npos) << asked.out;
    // Abseil's own flags (--flagfile, --helpfull, ...) are --helpfull's, not --help's.
    EXPECT_EQ(asked.out.find("Flags from absl/"), std::string::npos) << asked.out;
    // The usage line names the program once ("ply-lobby: the gRPC lobby", not "ply-lobby:
    // ply-lobby: ...").
    const std::string name =
        std::string(program.binary).substr(std::string(program.binary).rfind('/') + 1);
    EXPECT_EQ(asked.out.find(name + ": " + name + ":"), std::string::npos) << asked.out;
  }
}

// The terminal client answers --help with its commands (its own help) and --helpfull with its
// flags, both with status 0.
TEST(ProgramHelp, TheTerminalClientAnswersHelpAndHelpfull) {
  const Asked help = RunShell(std::string(PLY_CLI_BINARY) + " --help");
  EXPECT_EQ(help.code, 0) << help.out;
  const Asked full = RunShell(std::string(PLY_CLI_BINARY) + " --helpfull");
#if ABSL_LTS_RELEASE_VERSION == 20220623
  EXPECT_EQ(full.code, 0) << full.out;
#endif
  EXPECT_NE(full.out.find("Flags from client-cli/"), std::string::npos) << full.out;
}

TEST(ProgramHelp, TheHealthCheckAnswersHelpInsteadOfDialingIt) {
  // It used to resolve "--help" as a host name and fail after a DNS error.
  Asked asked = RunShell(std::string(PLY_HEALTHCHECK_BINARY) + " --help");
  EXPECT_EQ(asked.code, 0) << asked.out;
  EXPECT_NE(asked.out.find("usage: ply-healthcheck HOST:PORT [SERVICE]"), std::string::npos)
      << asked.out;
  EXPECT_EQ(asked.out.find("DNS"), std::string::npos) << asked.out;
  asked = RunShell(std::string(PLY_HEALTHCHECK_BINARY) + " --port=1");
  EXPECT_EQ(asked.code, 2) << asked.out;
  EXPECT_NE(asked.out.find("unknown flag --port=1"), std::string::npos) << asked.out;
}

TEST(ProgramHelp, TheGomocupEnginesAnswerHelpWithTheirUsage) {
  // pbrain-greedy took "--help" for a flag without a value and said its usage as an error.
  for (const std::string binary : {PBRAIN_PLY_BINARY, PBRAIN_GREEDY_BINARY}) {
    const Asked asked = RunShell(binary + " --help </dev/null");
    SCOPED_TRACE(binary);
    EXPECT_EQ(asked.code, 0) << asked.out;
    EXPECT_NE(asked.out.find("usage: pbrain-"), std::string::npos) << asked.out;
  }
}

// pbrain-greedy read "--defence ten" as 0 (never defends) and "--seed 12x" as 12, and played.
TEST(ProgramHelp, TheGreedyEngineRejectsNumbersItCannotRead) {
  const std::string binary = PBRAIN_GREEDY_BINARY;
  for (const char* flags : {"--defence ten", "--defence 101", "--defence -1", "--seed 12x"}) {
    const Asked asked = RunShell(binary + " " + flags + " </dev/null");
    SCOPED_TRACE(flags);
    EXPECT_EQ(asked.code, 2) << asked.out;
    EXPECT_NE(asked.out.find("not '"), std::string::npos) << asked.out;
  }
  const Asked fine = RunShell("echo END | " + binary + " --defence 50 --seed 12");
  EXPECT_EQ(fine.code, 0) << fine.out;
}

// gomoku-strength said its usage as an error on --help and threw (an abort) on "match a b ten".
TEST(ProgramHelp, TheGomokuStrengthToolAnswersHelpAndRejectsBadCounts) {
  const std::string binary = GOMOKU_STRENGTH_BINARY;
  const Asked help = RunShell(binary + " --help");
  EXPECT_EQ(help.code, 0) << help.out;
  EXPECT_NE(help.out.find("usage: gomoku-strength match A B"), std::string::npos) << help.out;
  const Asked bad_count = RunShell(binary + " match hard greedy ten");
  EXPECT_EQ(bad_count.code, 2) << bad_count.out;
  EXPECT_NE(bad_count.out.find("'ten' is not a count"), std::string::npos) << bad_count.out;
  const Asked no_games = RunShell(binary + " match hard greedy 0");
  EXPECT_EQ(no_games.code, 2) << no_games.out;
  const Asked unlimited_bench = RunShell(binary + " bench 0");
  EXPECT_EQ(unlimited_bench.code, 2) << unlimited_bench.out;
  const Asked bad_rule = RunShell(binary + " match hard greedy 2 10 nonsense");
  EXPECT_EQ(bad_rule.code, 2) << bad_rule.out;
  EXPECT_NE(bad_rule.out.find("nonsense"), std::string::npos) << bad_rule.out;
  const Asked bad_level = RunShell(binary + " match hard grandmaster 2");
  EXPECT_EQ(bad_level.code, 2) << bad_level.out;
  const Asked bad_jobs = RunShell("JOBS=two " + binary + " match hard greedy 2");
  EXPECT_EQ(bad_jobs.code, 2) << bad_jobs.out;
  EXPECT_NE(bad_jobs.out.find("JOBS='two'"), std::string::npos) << bad_jobs.out;
}

// A numeric flag out of range stops ply-lobby and ply-web before they start anything, with a
// sentence and exit 2. Before, ply-lobby started with --claim_after_s=-5 (claims at once) or
// --threads=0 (no call served), and both clamped others without a word.
TEST(ProgramFlags, ServersRefuseNumericFlagsOutOfRange) {
  // The database is nowhere: a lobby that got past its flags would fail on it, with 1.
  const std::string lobby =
      std::string(PLY_LOBBY_BINARY) + " --database_url=postgresql://127.0.0.1:1/x --db_wait_s=0";
  const std::pair<std::string, std::string> cases[] = {
      {lobby + " --claim_after_s=-5",
       "ply-lobby: --claim_after_s=-5 is out of range: it must be 0..31536000 (0 means never)"},
      {lobby + " --threads=0", "--threads=0 is out of range"},
      {lobby + " --analysis_parallel=0", "--analysis_parallel=0 is out of range"},
      {lobby + " --presence_poll_s=0.001",
       "--presence_poll_s=0.001 is out of range: it must be 0.01..3600"},
      {lobby + " --client_calls_per_s=nan", "--client_calls_per_s=nan is out of range"},
      {std::string(PLY_WEB_BINARY) + " --threads=8",
       "ply-web: --threads=8 is out of range: it must be 40..65536"},
      {std::string(PLY_WEB_BINARY) + " --client_rps=-1", "--client_rps=-1 is out of range"},
      {std::string(PLY_WEB_BINARY) + " --presence_hold_s=0", "--presence_hold_s=0 is out of range"},
  };
  for (const auto& [command, sentence] : cases) {
    SCOPED_TRACE(command);
    const Asked asked = RunShell(command);
    EXPECT_EQ(asked.code, 2) << asked.out;
    EXPECT_NE(asked.out.find(sentence), std::string::npos) << asked.out;
  }
}

}  // namespace
