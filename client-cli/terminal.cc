#include "client-cli/terminal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace ply::client {
namespace {

termios saved_termios;
bool saved = false;

void Restore() {
  if (saved) tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
}

void OnFatalSignal(int signo) {
  Restore();
  signal(signo, SIG_DFL);
  raise(signo);
}

// A signal handler may only write to a pipe; the poll() loop reads the other end.
int resize_pipe[2] = {-1, -1};
struct sigaction saved_winch;

void OnResize(int) {
  const int saved_errno = errno;
  const char one = 1;
  (void)!write(resize_pipe[1], &one, 1);
  errno = saved_errno;
}

}  // namespace

ResizeWatch::ResizeWatch() {
  if (pipe2(resize_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction action {};
  action.sa_handler = OnResize;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a resize must not fail a read or write elsewhere; poll() wakes on the pipe.
  action.sa_flags = SA_RESTART;
  sigaction(SIGWINCH, &action, &saved_winch);
}

ResizeWatch::~ResizeWatch() {
  if (resize_pipe[0] < 0) return;
  sigaction(SIGWINCH, &saved_winch, nullptr);
  close(resize_pipe[0]);
  close(resize_pipe[1]);
  resize_pipe[0] = resize_pipe[1] = -1;
}

int ResizeWatch::wake_fd() const { return resize_pipe[0]; }

bool ResizeWatch::Take() {
  char drain[16];
  bool any = false;
  while (resize_pipe[0] >= 0 && read(resize_pipe[0], drain, sizeof(drain)) > 0) any = true;
  return any;
}

RawTerminal::RawTerminal() {
  if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_termios) != 0) return;
  saved = true;
  termios raw = saved_termios;
  // Keys arrive one by one, unechoed; Ctrl-C is a key too (the line editor handles it), so the
  // terminal is always restored on the way out. Output processing stays (\n -> \r\n).
  raw.c_lflag &= ~(ICANON | ECHO | ISIG | IEXTEN);
  raw.c_iflag &= ~(IXON | ICRNL | INLCR);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0) return;
  active_ = true;
  for (int s : {SIGTERM, SIGHUP, SIGQUIT}) signal(s, OnFatalSignal);
}

RawTerminal::~RawTerminal() {
  if (!active_) return;
  Restore();
  saved = false;
}

std::vector<LineEditor::Result> LineEditor::Feed(std::string_view bytes) {
  std::vector<Result> out;
  for (char ch : bytes) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (escape_ > 0) {
      // ESC [ ... final byte, or ESC O x: skip to the end of the sequence.
      if (escape_ == 2 && (c == '[' || c == 'O')) {
        escape_ = 1;
      } else if (escape_ == 2 || (c >= '@' && c <= '~')) {
        escape_ = 0;
      }
      continue;
    }
    switch (c) {
      case '\r':
      case '\n':
        out.push_back({Event::kLine, pending_});
        pending_.clear();
        break;
      case 0x03:  // Ctrl-C
        out.push_back({Event::kQuit, ""});
        break;
      case 0x04:  // Ctrl-D
        if (pending_.empty()) out.push_back({Event::kQuit, ""});
        break;
      case 0x7f:
      case 0x08:
        // Back over one UTF-8 character.
        while (!pending_.empty() && (static_cast<unsigned char>(pending_.back()) & 0xC0) == 0x80) {
          pending_.pop_back();
        }
        if (!pending_.empty()) pending_.pop_back();
        break;
      case 0x15:  // Ctrl-U
        pending_.clear();
        break;
      case 0x1b:
        escape_ = 2;
        break;
      default:
        if (c >= 0x20 || c == '\t') pending_ += (c == '\t' ? ' ' : ch);
        break;
    }
  }
  return out;
}

bool StdinIsTty() { return isatty(STDIN_FILENO); }
bool StdoutIsTty() { return isatty(STDOUT_FILENO); }

int TerminalRows() {
  winsize w{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) != 0) return 0;
  return w.ws_row;
}

int TerminalCols() {
  winsize w{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) != 0) return 0;
  return w.ws_col;
}

void WriteOut(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(STDOUT_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

std::string Frame(const std::vector<std::string>& lines) {
  std::string out = "\x1b[H";
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    out += "\x1b[K";
    if (i + 1 < lines.size()) out += "\n";
  }
  out += "\x1b[J";
  return out;
}

}  // namespace ply::client
