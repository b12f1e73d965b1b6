// The terminal under the interactive commands: raw keyboard input (no echo, no line buffering,
// so the screen can change while a move is half typed), a line editor fed byte by byte, and
// whole-screen redraws that overwrite in place instead of scrolling.
#ifndef PLY_CLIENT_CLI_TERMINAL_H_
#define PLY_CLIENT_CLI_TERMINAL_H_

#include <termios.h>

#include <string>
#include <string_view>
#include <vector>

namespace ply::client {

// Puts stdin in raw mode while alive (when it is a terminal) and restores it after, also when a
// signal ends the process.
class RawTerminal {
 public:
  RawTerminal();
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

// Keys to lines: printable text, Backspace, Ctrl-U (erase the line), Enter; Ctrl-C and Ctrl-D
// (on an empty line) ask to leave. Escape sequences (arrows) are skipped.
class LineEditor {
 public:
  enum class Event { kLine, kQuit };
  struct Result {
    Event event;
    std::string line;
  };
  // Feeds bytes read from the keyboard; returns the finished lines and quit requests in order.
  std::vector<Result> Feed(std::string_view bytes);
  const std::string& pending() const { return pending_; }

 private:
  std::string pending_;
  int escape_ = 0;  // bytes of an escape sequence still to skip
};

// Notices terminal resizes (SIGWINCH) while alive: wake_fd() turns readable, for a poll() loop,
// and Take() says whether one happened since the last call.
class ResizeWatch {
 public:
  ResizeWatch();
  ~ResizeWatch();
  ResizeWatch(const ResizeWatch&) = delete;
  ResizeWatch& operator=(const ResizeWatch&) = delete;
  int wake_fd() const;
  bool Take();
};

bool StdinIsTty();
bool StdoutIsTty();
// The terminal's rows and columns, or 0 when unknown.
int TerminalRows();
int TerminalCols();

// Writes all of `text` to stdout (unbuffered).
void WriteOut(std::string_view text);

// Draws `lines` over the previous frame: cursor home, each line then clear-to-end-of-line, and
// whatever is below cleared. The cursor ends after the last line (the prompt).
std::string Frame(const std::vector<std::string>& lines);

}  // namespace ply::client

#endif  // PLY_CLIENT_CLI_TERMINAL_H_
