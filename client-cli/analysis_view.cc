#include "client-cli/analysis_view.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/core/display_text.h"

namespace ply::client {
namespace {

std::string MarkName(v1::MoveMark mark) {
  switch (mark) {
    case v1::MOVE_MARK_INACCURACY:
      return "inaccuracy";
    case v1::MOVE_MARK_MISTAKE:
      return "mistake";
    case v1::MOVE_MARK_BLUNDER:
      return "blunder";
    default:
      return "";
  }
}

std::string Counted(int n, const char* one, const char* many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

std::string Percent(double chance) { return absl::StrFormat("%.0f%%", 100 * chance); }

// The first few moves of a line, so that a row stays on one line.
std::string ShortLine(const v1::MoveAnalysis& m, size_t most) {
  std::vector<std::string> line(m.best_line().begin(), m.best_line().end());
  if (line.size() > most) {
    line.resize(most);
    line.push_back("...");
  }
  return absl::StrJoin(line, " ");
}

std::string Colour(const std::string& text, v1::MoveMark mark, Look look) {
  switch (mark) {
    case v1::MOVE_MARK_BLUNDER:
      return Colored(text, "1;31", look);
    case v1::MOVE_MARK_MISTAKE:
      return Colored(text, "33", look);
    case v1::MOVE_MARK_INACCURACY:
      return Colored(text, "36", look);
    default:
      return text;
  }
}

}  // namespace

std::string MarkSymbol(v1::MoveMark mark) {
  switch (mark) {
    case v1::MOVE_MARK_INACCURACY:
      return "?!";
    case v1::MOVE_MARK_MISTAKE:
      return "?";
    case v1::MOVE_MARK_BLUNDER:
      return "??";
    default:
      return "";
  }
}

std::string ProgressBar(int done, int total, int width) {
  const int filled = total > 0 ? std::clamp(done * width / total, 0, width) : 0;
  return absl::StrCat("[", std::string(filled, '#'), std::string(width - filled, '.'), "] ", done,
                      "/", total, " positions");
}

namespace {

std::string Ordinal(int n) {
  const int tens = n % 100;
  const char* suffix = "th";
  if (tens < 11 || tens > 13) {
    switch (n % 10) {
      case 1:
        suffix = "st";
        break;
      case 2:
        suffix = "nd";
        break;
      case 3:
        suffix = "rd";
        break;
      default:
        break;
    }
  }
  return absl::StrCat(n, suffix);
}

}  // namespace

std::string ProgressText(const v1::AnalysisProgress& p) {
  if (p.waiting()) return "waiting for the analysis another request started...";
  if (p.queue_position() > 0) {
    return absl::StrCat("waiting for a turn: ", Ordinal(p.queue_position()), " in line (",
                        p.running(), p.running() == 1 ? " analysis" : " analyses",
                        " running on this lobby)");
  }
  std::string line = absl::StrCat("analysing ", ProgressBar(p.positions_done(), p.positions()));
  if (p.bots_busy()) absl::StrAppend(&line, " (the bots are busy with people's moves: waiting)");
  return line;
}

std::string AnalysisText(const v1::Match& match, const v1::MatchAnalysis& a, Look look) {
  std::string out = Bold(absl::StrCat("Analysis of match ", a.match_id(), " (", a.game(), ")",
                                      a.partial() ? ", moves so far (the match goes on)" : ""),
                         look);
  out += "\n";
  out += Dim(
      absl::StrCat("evaluations from the mover's side, in the game's units and as a win "
                   "chance; = marks an exact verdict (both sides of the move proven); ",
                   a.positions(), " positions at ", a.budget_ms(), " ms",
                   a.max_depth() > 0 ? absl::StrCat(", depth ", a.max_depth()) : "",
                   a.max_nodes() > 0 ? absl::StrCat(", ", a.max_nodes(), " nodes") : "", " each"),
      look);
  out += "\n\n";
  out += absl::StrFormat("%4s  %-7s %-8s %-3s %-19s %-19s %-1s  %-8s %s\n", "#", "side", "move", "",
                         "before", "after", "", "best", "line");
  for (const v1::MoveAnalysis& m : a.moves()) {
    std::string side = m.seat() >= 0 && m.seat() < match.seats_size()
                           ? match.seats(m.seat()).side()
                           : absl::StrCat("seat ", m.seat() + 1);
    const std::string before =
        absl::StrCat(m.score_before_text(), " (", Percent(m.win_before()), ")");
    const std::string after = absl::StrCat(m.score_after_text(), " (", Percent(m.win_after()), ")");
    const std::string best = m.best_move() == m.move() ? "=" : m.best_move();
    std::string row = absl::StrFormat(
        "%4d  %-7s %-8s %-3s %-19s %-19s %-1s  %-8s %s", m.ply(), DisplayText(side),
        DisplayText(m.move()), MarkSymbol(m.mark()), before, after, m.exact_verdict() ? "=" : "",
        DisplayText(best), DisplayText(ShortLine(m, 6)));
    out += Colour(row, m.mark(), look);
    out += "\n";
  }
  out += "\n";
  for (const v1::PlayerAnalysis& p : a.players()) {
    std::string who = p.seat() < match.seats_size()
                          ? absl::StrCat(match.seats(p.seat()).side(), " (",
                                         DisplayText(match.seats(p.seat()).display_name()), ")")
                          : absl::StrCat("seat ", p.seat() + 1);
    if (p.moves() == 0) {
      // No move to judge: an accuracy of 0% would read as the worst play there is.
      out += absl::StrCat(who, ": no moves to judge\n");
      continue;
    }
    out += absl::StrCat(who, ": accuracy ", absl::StrFormat("%.1f%%", p.accuracy()), ", ",
                        Counted(p.moves(), "move", "moves"), ": ",
                        Counted(p.inaccuracies(), "inaccuracy", "inaccuracies"), " (?!), ",
                        Counted(p.mistakes(), "mistake", "mistakes"), " (?), ",
                        Counted(p.blunders(), "blunder", "blunders"), " (?\?)\n");
  }
  return out;
}

std::string MoveAnalysisLine(const v1::MoveAnalysis& m, Look look) {
  std::string verdict = m.mark() == v1::MOVE_MARK_NONE
                            ? "no mark"
                            : absl::StrCat(MarkSymbol(m.mark()), " ", MarkName(m.mark()));
  if (m.exact_verdict()) verdict += " (exact)";
  std::string best = m.best_move() == m.move() ? "the best move"
                                               : absl::StrCat("best ", DisplayText(m.best_move()));
  std::string line = ShortLine(m, 8);
  return Colour(absl::StrCat("Analysis: ", verdict, "; ", best,
                             line.empty() ? "" : absl::StrCat(", line ", DisplayText(line)), "; ",
                             m.score_before_text(), " (", Percent(m.win_before()), ") -> ",
                             m.score_after_text(), " (", Percent(m.win_after()), ")"),
                m.mark(), look);
}

}  // namespace ply::client
