#include "client-cli/screen.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/proto_convert.h"
#include "engine/core/display_text.h"
#include "engine/registry/registry.h"

namespace ply::client {

std::string FormatClock(int64_t ms) {
  ms = std::max<int64_t>(0, ms);
  const int64_t s = ms / 1000;
  if (s >= 3600) return absl::StrFormat("%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  if (ms < 10000) return absl::StrFormat("0:%02d.%d", s, ms % 1000 / 100);
  return absl::StrFormat("%d:%02d", s / 60, s % 60);
}

std::string FormatCount(int64_t n) {
  if (n < 1000) return absl::StrCat(n);
  if (n < 1000000) return absl::StrFormat("%.1fk", n / 1e3);
  return absl::StrFormat("%.2fM", n / 1e6);
}

namespace {

std::string SideName(const v1::Match& match, int seat) {
  if (seat >= 0 && seat < match.seats_size() && !match.seats(seat).side().empty()) {
    return match.seats(seat).side();
  }
  return absl::StrCat("seat ", seat + 1);
}

// A move a level's random-move chance chose: no search behind it. Read it only where the search
// is not hidden (the lobby keeps it while a person plays): a hidden one's fields are empty too.
bool RandomMove(const v1::BotThinking& b) { return b.depth() == 0 && b.nodes() == 0; }
// Whether the move's line shows a search (and its score needs the legend).
bool ShowsSearch(const v1::BotThinking& b) { return !b.hidden() && !RandomMove(b); }

// The mover's score text ("+35", "-12", "win in 3", "loss in 5", "draw", "win by 6") from the first
// seat's side; a forced result names the side it favours.
std::string FirstSeatScore(const v1::MoveRecord& move, const v1::Match& match) {
  const std::string& text = move.bot().score_text();
  const int mover = move.seat();
  const int other = mover == 0 ? 1 : 0;
  if (text.empty()) return "?";
  // "win in 3", "loss in 5", and a proven margin "win by 6", "loss by 2".
  for (const char* how : {"in ", "by "}) {
    if (absl::StartsWith(text, absl::StrCat("win ", how))) {
      return absl::StrCat(SideName(match, mover), " wins ", how, text.substr(7));
    }
    if (absl::StartsWith(text, absl::StrCat("loss ", how))) {
      return absl::StrCat(SideName(match, other), " wins ", how, text.substr(8));
    }
  }
  int score = 0;
  if (!absl::SimpleAtoi(text, &score)) return text;
  if (mover != 0) score = -score;
  return score > 0 ? absl::StrCat("+", score) : absl::StrCat(score);
}

}  // namespace

std::string BotSummary(const v1::MoveRecord& move, const v1::Match& match) {
  if (!move.has_bot()) return "";
  const v1::BotThinking& b = move.bot();
  if (b.hidden()) return "its search is shown when the game ends";
  if (RandomMove(b)) return "random move";
  return absl::StrCat("depth ", b.depth(), ", ", FirstSeatScore(move, match), ", ",
                      FormatCount(b.nodes()), " nodes");
}

std::string ScoreLegend(const v1::Match& match) {
  for (const v1::MoveRecord& m : match.moves()) {
    if (m.has_bot() && ShowsSearch(m.bot())) {
      return absl::StrCat("Scores are from ", SideName(match, 0), "'s side: + is good for ",
                          SideName(match, 0), ", - for ", SideName(match, 1), ".");
    }
  }
  return "";
}

std::string MoveListText(const v1::Match& match) {
  std::vector<std::string> parts;
  for (int i = 0; i < match.moves_size(); ++i) {
    const std::string& move = match.moves(i).move();
    if (i % 2 == 0) {
      parts.push_back(absl::StrCat(i / 2 + 1, ". ", move));
    } else {
      parts.back() += " " + move;
    }
  }
  return absl::StrJoin(parts, "  ");
}

std::vector<std::string> GameOverLines(const v1::Match& match, int my_seat) {
  const v1::MatchResult& r = match.result();
  // A match cancelled or aborted has no result: it told its player "It's a draw."
  const bool result = HasResult(match);
  std::string text = DisplayText(r.text());
  if (text.empty()) {
    text = !result          ? "no result"
           : r.winner() < 0 ? "a draw"
                            : absl::StrCat("seat ", r.winner() + 1, " wins");
  }
  std::vector<std::string> lines = {absl::StrCat("Game over: ", text, ".")};
  if (my_seat >= 0) {
    lines.push_back(!result                 ? "No result."
                    : r.winner() < 0        ? "It's a draw."
                    : r.winner() == my_seat ? "You won!"
                                            : "You lost.");
  }
  // A rated game its result does not rate (a draw agreed before either side moved, say) said
  // nothing, and the player looked for the rating change.
  if (!r.rating_note().empty()) {
    std::string note = DisplayText(r.rating_note());
    note[0] = absl::ascii_toupper(static_cast<unsigned char>(note[0]));
    lines.push_back(absl::StrCat(note, "."));
  }
  lines.push_back(absl::StrCat("The record: ply record ", match.id(),
                               "    step through it: ply replay ", match.id()));
  return lines;
}

namespace {

// Columns `text` takes on a terminal: escape sequences take none, and every character of the
// boards and logs (ASCII, or glyphs such as ● · ─) takes one.
size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (char c : StripAnsi(text)) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return width;
}

std::string Title(const v1::Match& match, const AnyGame& game, Look look) {
  std::vector<std::string> options;
  const GameOptions defaults = [&] {
    GameOptions d;
    for (const OptionInfo& o : game.Info().options) d[o.name] = o.default_value;
    return d;
  }();
  for (const auto& [k, v] : game.Options()) {
    auto it = defaults.find(k);
    if (it == defaults.end() || it->second != v) options.push_back(absl::StrCat(k, "=", v));
  }
  std::sort(options.begin(), options.end());
  const char* dot = look == Look::kPlain ? " - " : " · ";
  return absl::StrCat(Bold(absl::StrCat("ply", dot, game.Info().title), look),
                      options.empty() ? "" : absl::StrCat(" (", absl::StrJoin(options, ", "), ")"),
                      dot, "match ", match.id());
}

bool ShowsThinking(const MatchModel& view, const ScreenOptions& o) {
  return ShowsBotThinking(view.match(), o.my_seat >= 0);
}

size_t SideWidth(const MatchModel& view) {
  size_t width = 0;
  for (int i = 0; i < view.match().seats_size(); ++i) width = std::max(width, view.Side(i).size());
  return width;
}

// Who plays which side, whose turn it is, clocks (red when low).
std::vector<std::string> SeatLines(const MatchModel& view, const ScreenOptions& o) {
  const v1::Match& m = view.match();
  const Look look = o.look;
  const size_t side_width = SideWidth(view);
  // You, and who else is a guest (a person without a player account: nobody can pass for a
  // registered player).
  const auto seat_name = [&](int i) {
    const v1::Seat& s = m.seats(i);
    if (i == o.my_seat) return view.Player(i) + " (you)";
    const bool guest = s.kind() == v1::SEAT_KIND_HUMAN && s.taken() && s.player().empty();
    return view.Player(i) + (guest ? " (guest)" : "");
  };
  size_t name_width = 0;
  for (int i = 0; i < m.seats_size(); ++i) name_width = std::max(name_width, seat_name(i).size());
  std::vector<std::string> lines;
  for (int i = 0; i < m.seats_size(); ++i) {
    const bool to_move = view.active() && m.to_move() == i;
    std::string name = seat_name(i);
    // The piece, unless the side's name already is it ("X").
    const std::string glyph = SideGlyph(m.spec().name(), i, look);
    std::string line = absl::StrCat(
        to_move ? (look == Look::kPlain ? "> " : "▶ ") : "  ",
        StripAnsi(glyph) == view.Side(i) ? "" : glyph + " ", view.Side(i),
        std::string(side_width - view.Side(i).size() + 2, ' '), to_move ? Bold(name, look) : name);
    if (m.has_time_control()) {
      const int64_t ms = view.ClockMs(i, o.now);
      const std::string clock = FormatClock(ms);
      absl::StrAppend(&line, std::string(name_width - name.size() + 2, ' '),
                      ms < kLowClockMs ? Colored(clock, "1;31", look) : clock);
    }
    lines.push_back(line);
  }
  return lines;
}

// Under the board: the last move, whose turn it is, what is going on.
}  // namespace

std::vector<std::string> PresenceLines(const MatchModel& view, const ScreenOptions& o) {
  const v1::Match& m = view.match();
  std::vector<std::string> lines;
  if (!view.active()) return lines;
  for (int i = 0; i < m.seats_size(); ++i) {
    const v1::Seat& seat = m.seats(i);
    if (!seat.away() || i == o.my_seat || seat.kind() != v1::SEAT_KIND_HUMAN) continue;
    std::string line = absl::StrCat(view.Player(i), " left the game");
    const int64_t claim_at_ms = ClaimAtMs(m, i);
    // The claim is the opponent's to make; a spectator only hears who left.
    if (o.my_seat >= 0 && claim_at_ms > 0) {
      const int64_t wait_ms = claim_at_ms - absl::ToUnixMillis(o.now);
      absl::StrAppend(&line, o.look == Look::kPlain ? " - " : " — ",
                      wait_ms > 0 ? absl::StrCat("you can claim the win in ", FormatClock(wait_ms))
                                  : "you can claim the win now: type 'claim' (or 'claim draw')");
    }
    lines.push_back(Colored(line, "33", o.look));
  }
  return lines;
}

namespace {

std::vector<std::string> StatusLines(const MatchModel& view, const ScreenOptions& o) {
  const v1::Match& m = view.match();
  const Look look = o.look;
  std::vector<std::string> status;
  if (m.moves_size() > 0) {
    const v1::MoveRecord& last = m.moves(m.moves_size() - 1);
    const std::string bot = ShowsThinking(view, o) ? BotSummary(last, m) : "";
    status.push_back(absl::StrCat("Last move: ", last.ply(), ". ", view.Side(last.seat()), " ",
                                  Bold(last.move(), look), bot.empty() ? "" : " (" + bot + ")"));
  }
  static const char* kSpinFancy[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
  static const char* kSpinPlain[] = {"|", "/", "-", "\\"};
  const std::string spin = o.spinner < 0          ? ""
                           : look == Look::kPlain ? kSpinPlain[o.spinner % 4]
                                                  : kSpinFancy[o.spinner % 10];
  if (view.over()) {
    for (const std::string& l : GameOverLines(m, o.my_seat)) {
      status.push_back(l.rfind("Game over", 0) == 0 ? Bold(l, look) : l);
    }
  } else if (m.status() == v1::MATCH_STATUS_WAITING) {
    status.push_back(
        absl::StrCat("Waiting for an opponent: they join with `ply join ", m.id(), "`"));
  } else if (view.active()) {
    const int seat = m.to_move();
    if (seat == o.my_seat) {
      status.push_back(Colored(absl::StrCat("Your move (", view.Side(seat), ")."), "1;32", look) +
                       " Type a move, 'moves' or 'help'.");
    } else if (view.BotToMove()) {
      status.push_back(
          absl::StrCat(view.Side(seat), ": ", view.Player(seat), " is thinking ", spin));
    } else {
      status.push_back(absl::StrCat(view.Side(seat), ": ", view.Player(seat), " to move"));
    }
    for (std::string& l : PresenceLines(view, o)) status.push_back(std::move(l));
    if (m.draw_offer() >= 0) {
      status.push_back(m.draw_offer() == o.my_seat
                           ? std::string("You offered a draw; it stands until your opponent moves.")
                           : absl::StrCat(view.Side(m.draw_offer()), " offers a draw",
                                          o.my_seat >= 0 ? ": type 'draw' to accept." : "."));
    }
    if (!view.draw_answer().empty()) status.push_back(view.draw_answer() + ".");
  }
  return status;
}

// Every move, oldest first, with what a bot's search saw where it is shown, or the time taken.
std::vector<std::string> LogLines(const MatchModel& view, const ScreenOptions& o) {
  const v1::Match& m = view.match();
  const bool thinking = ShowsThinking(view, o);
  const int side_width = static_cast<int>(SideWidth(view));
  std::vector<std::string> log;
  for (const v1::MoveRecord& mv : m.moves()) {
    const std::string bot = thinking ? BotSummary(mv, m) : "";
    log.push_back(absl::StrFormat(
        "%4d. %-*s %-7s %s", mv.ply(), side_width, view.Side(mv.seat()), mv.move(),
        bot.empty() ? absl::StrFormat("(%.1f s)", mv.think_ms() / 1000.0) : Dim(bot, o.look)));
  }
  return log;
}

}  // namespace

std::vector<std::string> ComposeScreen(const MatchModel& view, const ScreenOptions& o) {
  std::vector<std::string> lines;
  if (!view.loaded()) {
    lines.push_back("connecting to the lobby...");
    for (const std::string& n : o.notices) lines.push_back(n);
    return lines;
  }
  const v1::Match& m = view.match();
  lines.push_back(Title(m, view.game(), o.look));
  for (std::string& l : SeatLines(view, o)) lines.push_back(std::move(l));
  lines.push_back("");

  const BoardOptions board_options = {.flip = FlipsFor(m.spec().name(), o.my_seat),
                                      .over = view.over()};
  std::vector<std::string> board =
      absl::StrSplit(RenderBoard(view.game(), o.look, board_options), '\n');
  while (!board.empty() && board.back().empty()) board.pop_back();
  const std::vector<std::string> status = StatusLines(view, o);
  const std::vector<std::string> log = o.move_log ? LogLines(view, o) : std::vector<std::string>();
  const std::string legend = o.move_log && ShowsThinking(view, o) ? ScoreLegend(m) : "";

  // How much of the log to show, and where: beside the board where the terminal is wide enough
  // (it costs no rows until it runs past the board's last line), else under the status.
  int shown = static_cast<int>(log.size());
  if (o.my_seat >= 0) shown = std::min(shown, kPlayerLogMoves);
  const int legend_rows = legend.empty() ? 0 : 1;
  const int notice_rows = o.notices.empty() ? 0 : static_cast<int>(o.notices.size()) + 1;
  const int fixed = static_cast<int>(lines.size() + board.size() + 1 + status.size()) +
                    notice_rows + (o.prompt.empty() ? 0 : 1);
  const int spare = o.rows > 0 ? o.rows - fixed : std::numeric_limits<int>::max() / 2;
  size_t board_width = 0, log_width = DisplayWidth(legend);
  for (const std::string& l : board) board_width = std::max(board_width, DisplayWidth(l));
  for (const std::string& l : log) log_width = std::max(log_width, DisplayWidth(l));
  constexpr size_t kGap = 4;
  const bool beside =
      !log.empty() && o.cols > 0 && board_width + kGap + log_width <= static_cast<size_t>(o.cols);
  shown = beside
              ? std::min(shown, static_cast<int>(board.size()) - legend_rows + std::max(0, spare))
              : std::min(shown, spare - 1 - legend_rows);
  std::vector<std::string> recent;
  if (shown > 0) {
    if (legend_rows) recent.push_back(Dim(legend, o.look));
    recent.insert(recent.end(), log.end() - shown, log.end());
  }

  if (beside) {
    for (size_t i = 0; i < std::max(board.size(), recent.size()); ++i) {
      std::string left = i < board.size() ? board[i] : "";
      if (i < recent.size()) {
        left += std::string(board_width + kGap - DisplayWidth(left), ' ') + recent[i];
      }
      lines.push_back(std::move(left));
    }
  } else {
    lines.insert(lines.end(), board.begin(), board.end());
  }
  lines.push_back("");
  lines.insert(lines.end(), status.begin(), status.end());
  if (!beside && !recent.empty()) {
    lines.push_back("");
    lines.insert(lines.end(), recent.begin(), recent.end());
  }

  if (!o.notices.empty()) lines.push_back("");
  for (const std::string& n : o.notices) lines.push_back(n);
  if (!o.prompt.empty()) lines.push_back(o.prompt);
  return lines;
}

}  // namespace ply::client
