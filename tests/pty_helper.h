// The terminal client `ply` in a pseudo-terminal (forkpty) for end-to-end tests, and a fixture
// with the back end (stack_helper.h) and a config folder per user. Tests read the screen the
// way a person would: the text of the latest frame (what follows the last cursor-home), and
// type keys into the terminal. PLY_CLIENT_BINARY names the binary.
#ifndef PLY_TESTS_PTY_HELPER_H_
#define PLY_TESTS_PTY_HELPER_H_

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
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client-cli/render.h"
#include "engine/registry/registry.h"
#include "ply/v1/lobby.grpc.pb.h"
#include "tests/stack_helper.h"

extern char** environ;

namespace ply::testing {

// Generous: the machine may be busy with builds; a passing run takes a fraction of this.
constexpr absl::Duration kScreenTimeout = absl::Seconds(30);

// The `ply` binary on the slave side of a pseudo-terminal.
class PtyProcess {
 public:
  static std::unique_ptr<PtyProcess> Start(const std::vector<std::string>& args,
                                           const std::vector<std::string>& env) {
    std::vector<std::string> argv_text = {PLY_CLIENT_BINARY};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<std::string> env_text;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry = *e;
      bool overridden = entry.rfind("NO_COLOR=", 0) == 0;
      for (const std::string& mine : env) {
        overridden |= entry.substr(0, entry.find('=') + 1) == mine.substr(0, mine.find('=') + 1);
      }
      if (!overridden) env_text.push_back(entry);
    }
    env_text.insert(env_text.end(), env.begin(), env.end());
    // Built before fork: the child of a threaded process may only make async-signal-safe calls.
    std::vector<char*> argv, envp;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);
    winsize size{.ws_row = 50, .ws_col = 120, .ws_xpixel = 0, .ws_ypixel = 0};
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, &size);
    if (pid < 0) return nullptr;
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    fcntl(master, F_SETFD, FD_CLOEXEC);
    return std::unique_ptr<PtyProcess>(new PtyProcess(pid, master));
  }

  ~PtyProcess() {
    if (!exit_code_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(master_);
  }

  void Type(const std::string& keys) { (void)!write(master_, keys.data(), keys.size()); }

  // Changes the terminal's size, as a person dragging the window does (the process gets
  // SIGWINCH).
  void Resize(int rows, int cols) {
    winsize size{.ws_row = static_cast<unsigned short>(rows),
                 .ws_col = static_cast<unsigned short>(cols),
                 .ws_xpixel = 0,
                 .ws_ypixel = 0};
    ioctl(master_, TIOCSWINSZ, &size);
  }
  // Everything written so far, escape sequences included.
  const std::string& Raw() const { return output_; }
  // Reads whatever is waiting, for up to `d`.
  void Pump(absl::Duration d) {
    WaitUntil([] { return false; }, d);
  }

  // The latest frame, without colours (and with the terminal's \r\n as \n).
  std::string Screen() const {
    const size_t home = output_.rfind("\x1b[H");
    return Text(home == std::string::npos ? output_ : output_.substr(home + 3));
  }
  std::string Output() const { return Text(output_); }

  // Waits until the latest frame contains every one of `texts`.
  bool WaitScreen(const std::vector<std::string>& texts, absl::Duration timeout = kScreenTimeout) {
    return WaitScreenAny({texts}, timeout);
  }
  // Waits until the latest frame contains all texts of one of `choices`.
  bool WaitScreenAny(const std::vector<std::vector<std::string>>& choices,
                     absl::Duration timeout = kScreenTimeout) {
    return WaitUntil(
        [&] {
          const std::string screen = Screen();
          for (const std::vector<std::string>& texts : choices) {
            bool all = true;
            for (const std::string& t : texts) all &= screen.find(t) != std::string::npos;
            if (all) return true;
          }
          return false;
        },
        timeout);
  }

  // Reads output until the process ends; its exit code, or nullopt on timeout.
  std::optional<int> WaitExit(absl::Duration timeout = kScreenTimeout) {
    WaitUntil([] { return false; }, timeout);
    if (!exit_code_) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    return exit_code_;
  }

 private:
  PtyProcess(pid_t pid, int master) : pid_(pid), master_(master) {}

  static std::string Text(const std::string& raw) {
    std::string text = client::StripAnsi(raw);
    text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
    return text;
  }

  // Reads until `done` holds, the process has closed the terminal, or the timeout.
  bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    for (;;) {
      if (done()) return true;
      if (eof_) break;
      const int wait_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
      if (wait_ms <= 0) break;
      pollfd p{.fd = master_, .events = POLLIN, .revents = 0};
      if (poll(&p, 1, wait_ms) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(master_, buf, sizeof(buf));
      if (n > 0) {
        output_.append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        eof_ = true;  // EIO: the process closed its side
      }
    }
    if (eof_ && !exit_code_) {
      int status = 0;
      if (waitpid(pid_, &status, 0) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    return done();
  }

  pid_t pid_;
  int master_;
  std::string output_;
  bool eof_ = false;
  std::optional<int> exit_code_;
};

// Whether `screen` shows `board`: its lines start consecutive lines of the screen (the move log
// may follow them on the same lines).
inline bool HasBoard(const std::string& screen, const std::string& board) {
  const std::vector<std::string> have = absl::StrSplit(screen, '\n');
  std::vector<std::string> want = absl::StrSplit(board, '\n');
  while (!want.empty() && want.back().empty()) want.pop_back();
  for (size_t i = 0; i + want.size() <= have.size(); ++i) {
    bool all = true;
    for (size_t j = 0; j < want.size() && all; ++j) all = absl::StartsWith(have[i + j], want[j]);
    if (all) return true;
  }
  return false;
}

// How often `what` occurs in `text`.
inline size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ClientFixture : public StackFixture {
 protected:
  void SetUp() override {
    auto url = NewDatabase("client");
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
    StartLobby();
    char dir[] = "/tmp/ply-client-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    home_ = dir;
  }

  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(home_, ignored);
  }

  // `ply ARGS` in a terminal, as user `name` (each user has their own config folder).
  std::unique_ptr<PtyProcess> Ply(const std::string& name, const std::vector<std::string>& args,
                                  bool color = false) {
    std::vector<std::string> env = {absl::StrCat("PLY_SERVER=", lobby_->address()),
                                    absl::StrCat("XDG_CONFIG_HOME=", home_, "/", name),
                                    absl::StrCat("USER=", name), "TERM=xterm"};
    if (!color) env.push_back("NO_COLOR=1");
    auto p = PtyProcess::Start(args, env);
    EXPECT_NE(p, nullptr);
    return p;
  }

  // `ply ARGS` to its end: exit code and output (nullopt code: it did not end in time).
  std::pair<std::optional<int>, std::string> Run(const std::string& name,
                                                 const std::vector<std::string>& args) {
    auto p = Ply(name, args);
    const std::optional<int> code = p->WaitExit();
    return {code, p->Output()};
  }

  // The newest match's id.
  int64_t LatestMatch() {
    v1::ListMatchesRequest request;
    request.set_page_size(1);
    grpc::ClientContext context;
    v1::ListMatchesResponse list;
    EXPECT_TRUE(stub_->ListMatches(&context, request, &list).ok());
    return list.matches().empty() ? 0 : list.matches(0).id();
  }

  // The board as the plain screen shows it after `match`'s moves.
  static std::string Board(const v1::Match& match) {
    std::vector<std::string> moves;
    for (const auto& m : match.moves()) moves.push_back(m.move());
    auto game = ReplayGame(match.spec().name(), {}, moves);
    EXPECT_TRUE(game.ok()) << game.status();
    return game.ok() ? client::RenderBoard(**game, client::Look::kPlain) : "";
  }

  std::string home_;
};

}  // namespace ply::testing

#endif  // PLY_TESTS_PTY_HELPER_H_
