#include "client-cli/render.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "client-cli/screen.h"
#include "engine/core/board_look.h"
#include "engine/core/display_text.h"
#include "engine/core/text.h"
#include "engine/registry/registry.h"

namespace ply::client {
namespace {

// How the game looks (its kLook, engine/core/board_look.h); a plain look for a game this build
// does not know.
const BoardLook& StyleOf(std::string_view game) {
  static const BoardLook* none = new BoardLook{};
  const GameInfo* info = FindGame(game);
  return info != nullptr ? info->look : *none;
}

const Glyph* Find(const std::array<Glyph, 4>& glyphs, char c) {
  for (const Glyph& g : glyphs) {
    if (g.ascii != 0 && g.ascii == c) return &g;
  }
  return nullptr;
}

std::string Sgr(std::string_view text, std::string_view sgr) {
  if (sgr.empty()) return std::string(text);
  return "\x1b[" + std::string(sgr) + "m" + std::string(text) + "\x1b[0m";
}

// Captions are the lines of words under or beside a board ("Black (X) 2, White (O) 2; ..."):
// they hold a run of three letters, which coordinate lines ("a b c") and board rows never do.
bool IsCaption(std::string_view line) {
  int run = 0;
  for (char c : line) {
    run = std::isalpha(static_cast<unsigned char>(c)) ? run + 1 : 0;
    if (run >= 3) return true;
  }
  return false;
}

std::string FancyCaption(std::string_view line, const BoardLook& style) {
  std::string out(line);
  if (!style.caption_from.empty()) {
    std::string replacement(style.caption_to);
    for (const Glyph& g : style.pieces) {
      if (g.ascii == 0) continue;
      replacement = absl::StrReplaceAll(
          replacement, {{absl::StrCat("{", std::string(1, g.ascii), "}"), Sgr(g.text, g.sgr)}});
    }
    out = absl::StrReplaceAll(out, {{Absl(style.caption_from), replacement}});
  }
  for (const Glyph& g : style.pieces) {
    if (g.ascii == 0) continue;
    out = absl::StrReplaceAll(out, {{absl::StrCat("(", std::string(1, g.ascii), ")"),
                                     absl::StrCat("(", Sgr(g.text, g.sgr), ")")}});
  }
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// The board rows (the lines before the first caption) in reverse order, each row's cells
// reversed; the label after the cells stays with its row.
void Flip(const BoardLook& style, std::vector<std::string>& lines) {
  if (style.turn_cells == 0) return;
  const size_t width = static_cast<size_t>(style.turn_cells * style.turn_cell_width);
  size_t rows = 0;
  while (rows < lines.size() && !IsCaption(lines[rows]) && lines[rows].size() >= width) ++rows;
  std::reverse(lines.begin(), lines.begin() + rows);
  for (size_t r = 0; r < rows; ++r) {
    std::string& line = lines[r];
    std::string turned;
    for (int c = style.turn_cells - 1; c >= 0; --c) {
      turned += line.substr(static_cast<size_t>(c * style.turn_cell_width), style.turn_cell_width);
    }
    line = turned + line.substr(width);
  }
}

// A caption without its side-to-move words: "White (w) to move; B and W are kings" keeps the
// second part, Morris's "* " marker of the side to move goes.
std::string WithoutTurn(std::string line) {
  if (line.rfind("* ", 0) == 0) line.replace(0, 2, "  ");
  for (const char* separator : {"; ", ", "}) {
    std::vector<std::string> kept;
    for (absl::string_view part : absl::StrSplit(line, separator)) {
      if (!absl::EndsWith(part, " to move")) kept.emplace_back(part);
    }
    line = absl::StrJoin(kept, separator);
  }
  return line;
}

// The game's text with the options applied, line by line.
std::vector<std::string> BoardLines(const std::string& text, const BoardLook& style,
                                    const BoardOptions& options) {
  std::vector<std::string> lines = Lines(text);
  if (options.flip) Flip(style, lines);
  if (options.over) {
    for (std::string& line : lines) {
      if (IsCaption(line)) line = WithoutTurn(line);
    }
  }
  return lines;
}

// Splits "a10" into ("a", 10, ...) chunks for SortedMoves: digits compare as numbers.
bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i]));
    const bool db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      // Without leading zeros, the longer run of digits is the larger number.
      std::string_view na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

Look ChooseLook(bool stdout_is_tty, const char* no_color) {
  if (!stdout_is_tty) return Look::kPlain;
  if (no_color != nullptr && no_color[0] != '\0') return Look::kPlain;
  return Look::kFancy;
}

std::string RenderBoard(const AnyGame& game, Look look, const BoardOptions& options) {
  const BoardLook& style = StyleOf(game.Info().name);
  const std::vector<std::string> lines = BoardLines(game.Render(), style, options);
  if (look == Look::kPlain) return absl::StrCat(absl::StrJoin(lines, "\n"), "\n");

  // The last move's squares are those whose text it changed.
  std::vector<std::string> before;
  if (!game.History().empty()) {
    std::unique_ptr<AnyGame> previous = game.Clone();
    if (previous->Undo().ok()) before = BoardLines(previous->Render(), style, options);
  }
  const bool comparable = before.size() == lines.size();

  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (IsCaption(line)) {
      absl::StrAppend(&out, FancyCaption(line, style), "\n");
      continue;
    }
    for (size_t j = 0; j < line.size(); ++j) {
      const char c = line[j];
      const bool changed = comparable && (j >= before[i].size() || before[i][j] != c);
      const Glyph* piece = Find(style.pieces, c);
      const Glyph* glyph = piece != nullptr ? piece : Find(style.marks, c);
      const std::string_view text = glyph != nullptr ? glyph->text : std::string_view(&line[j], 1);
      std::string sgr(glyph != nullptr ? glyph->sgr : "");
      if (changed) {
        // Reverse video where a piece arrived; a grey background where one left.
        absl::StrAppend(&sgr, sgr.empty() ? "" : ";", piece != nullptr ? "7" : "100");
      }
      out += Sgr(text, sgr);
    }
    out += '\n';
  }
  return out;
}

bool FlipsFor(std::string_view game, int seat) {
  return StyleOf(game).flip_for_first_seat && seat == 0;
}

std::string SideGlyph(std::string_view game, int seat, Look look) {
  const BoardLook& style = StyleOf(game);
  if (seat < 0 || seat >= 2 || style.pieces[seat].ascii == 0) return "";
  const Glyph& g = style.pieces[seat];
  if (look == Look::kPlain) return std::string(1, g.ascii);
  return Sgr(g.text, g.sgr);
}

std::string Bold(std::string_view text, Look look) { return Colored(text, "1", look); }
std::string Dim(std::string_view text, Look look) { return Colored(text, "2", look); }
std::string Colored(std::string_view text, std::string_view sgr, Look look) {
  return look == Look::kPlain ? std::string(text) : Sgr(text, sgr);
}

std::string StripAnsi(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
      continue;
    }
    out += text[i];
  }
  return out;
}

std::vector<std::string> SortedMoves(std::vector<std::string> moves) {
  std::sort(moves.begin(), moves.end(), NaturalLess);
  return moves;
}

std::string FormatDate(int64_t unix_ms, absl::TimeZone zone) {
  if (unix_ms <= 0) return "?";
  return absl::FormatTime("%Y-%m-%d %H:%M", absl::FromUnixMillis(unix_ms), zone);
}

namespace {

// "medium ≈ 1450" (the ladder's; "~" in plain text) or "medium 1523 (12 rated games)".
std::string LevelWithRating(const v1::DifficultyLevel& level, Look look) {
  switch (level.rating_source()) {
    case v1::RATING_SOURCE_LADDER:
      return absl::StrCat(level.name(), look == Look::kFancy ? " \u2248 " : " ~", level.rating());
    case v1::RATING_SOURCE_LIVE:
      return absl::StrCat(level.name(), " ", level.rating(), " (", level.rated_games(),
                          level.rated_games() == 1 ? " rated game)" : " rated games)");
    default:
      return level.name();
  }
}

}  // namespace

std::string GamesTable(const v1::ListGamesResponse& games, Look look) {
  std::string out;
  for (const v1::GameInfo& g : games.games()) {
    absl::StrAppend(&out, Bold(g.name(), look), "  ", g.title(), ": ", g.description(), "\n");
    absl::StrAppend(&out, "    sides: ", absl::StrJoin(g.player_names(), " vs "), "\n");
    if (!g.notation_hint().empty()) absl::StrAppend(&out, "    moves: ", g.notation_hint(), "\n");
    if (g.record_formats_size() > 0) {
      absl::StrAppend(&out, "    records: text, ", absl::StrJoin(g.record_formats(), ", "),
                      " (ply record MATCH --format ", g.record_formats(0), ")\n");
    }
    std::vector<std::string> levels;
    for (const v1::DifficultyLevel& l : g.levels()) levels.push_back(LevelWithRating(l, look));
    if (!levels.empty()) {
      absl::StrAppend(&out, "    bot levels: ", absl::StrJoin(levels, ", "), "\n");
    }
    for (const v1::OptionInfo& o : g.options()) {
      absl::StrAppend(&out, "    option ", o.name(), "=", o.default_value(), ": ", o.description(),
                      "\n");
    }
  }
  absl::StrAppend(&out, "\nA level's rating: ", look == Look::kFancy ? "\u2248" : "~",
                  " the calibration ladder's (ply-engine ladder), which games against people "
                  "do not move.\n"
                  "Start one: ply new GAME --seat2 bot:LEVEL\n");
  return out;
}

std::string TimeControlText(const v1::TimeControl& tc) {
  // Seconds as the shortest decimal that says them ("0.54s"), minutes or hours when whole.
  auto span = [](int64_t ms) -> std::string {
    if (ms >= 3600000 && ms % 3600000 == 0) return absl::StrCat(ms / 3600000, "h");
    if (ms >= 60000 && ms % 60000 == 0) return absl::StrCat(ms / 60000, "m");
    return absl::StrCat(static_cast<double>(ms) / 1000, "s");
  };
  std::string out = span(tc.initial_ms());
  if (tc.increment_ms() > 0) absl::StrAppend(&out, "+", span(tc.increment_ms()));
  return out;
}

std::string MatchesTable(const v1::ListMatchesResponse& list, int limit, absl::TimeZone zone) {
  if (list.matches().empty()) {
    return "No matches. Start one: ply new connect4 --seat2 bot:medium\n";
  }
  std::string out = absl::StrFormat("%6s  %-10s %-9s %-7s %5s  %-16s  %-40s %s\n", "MATCH", "GAME",
                                    "STATUS", "CLOCK", "MOVES", "CREATED", "SEATS", "RESULT");
  bool any_open = false;
  for (const v1::MatchSummary& m : list.matches()) {
    std::vector<std::string> seats;
    for (const v1::Seat& s : m.seats()) {
      // A guest is marked, as on the board: a guest's name may be any free text.
      const bool guest = s.kind() == v1::SEAT_KIND_HUMAN && s.taken() && s.player().empty();
      seats.push_back(absl::StrCat(s.side(), ": ",
                                   s.taken() ? DisplayText(s.display_name()) : "(open)",
                                   guest ? " (guest)" : ""));
      any_open |= !s.taken();
    }
    const char* st = m.status() == v1::MATCH_STATUS_WAITING  ? "waiting"
                     : m.status() == v1::MATCH_STATUS_ACTIVE ? "active"
                                                             : "finished";
    absl::StrAppend(
        &out, absl::StrFormat(
                  "%6d  %-10s %-9s %-7s %5d  %-16s  %-40s %s\n", m.id(), m.spec().name(), st,
                  m.has_time_control() ? TimeControlText(m.time_control()) : "-", m.moves_played(),
                  FormatDate(m.created_ms(), zone), absl::StrJoin(seats, ", "),
                  m.has_result() ? DisplayText(m.result().text()) : ""));
  }
  if (!list.next_page_token().empty()) {
    constexpr int kMaxLimit = 200;  // the lobby's largest page
    absl::StrAppend(
        &out, "More matches than these ", list.matches_size(), ": ",
        limit < kMaxLimit
            ? absl::StrCat("`ply list --limit ", std::min(kMaxLimit, std::max(limit, 1) * 5),
                           "` shows more, or narrow with --game, --status, --open.\n")
            : "narrow the list with --game, --status or --open.\n");
  }
  if (any_open) absl::StrAppend(&out, "(open): a seat anyone can take with `ply join MATCH`.\n");
  return out;
}

std::string RecordText(const v1::Match& match, absl::TimeZone zone, std::string* error) {
  MatchModel view;
  if (absl::Status s = view.Reset(match, absl::Now()); !s.ok()) {
    *error = std::string(s.message());
    return "";
  }
  std::string out = absl::StrCat(view.game().Info().title, ", match ", match.id(), ": ");
  for (int i = 0; i < match.seats_size(); ++i) {
    absl::StrAppend(&out, i ? " vs " : "", view.Player(i), " (", view.Side(i), ")");
  }
  absl::StrAppend(&out, "\nCreated ", FormatDate(match.created_ms(), zone));
  if (match.moves_size() > 0) {
    absl::StrAppend(&out, ", last move ",
                    FormatDate(match.moves(match.moves_size() - 1).time_ms(), zone));
  }
  absl::StrAppend(&out, "\n");
  if (view.over()) {
    absl::StrAppend(&out, "Result: ", DisplayText(match.result().text()), "\n");
  } else {
    absl::StrAppend(&out, "In progress (", match.moves_size(), " moves so far)\n");
  }
  absl::StrAppend(&out, "\n", MoveListText(match), "\n\n");
  if (const std::string legend = ScoreLegend(match); !legend.empty()) {
    absl::StrAppend(&out, legend, "\n");
  }
  for (const v1::MoveRecord& mv : match.moves()) {
    absl::StrAppend(&out,
                    absl::StrFormat("%4d. %-8s %-8s %7.1f s  %s\n", mv.ply(), view.Side(mv.seat()),
                                    mv.move(), mv.think_ms() / 1000.0, BotSummary(mv, match)));
  }
  absl::StrAppend(&out, "\nStep through it: ply replay ", match.id(), "\n");
  return out;
}

std::string PlayerText(const v1::Player& player, absl::TimeZone zone) {
  std::string out = absl::StrCat(DisplayText(player.name()), player.bot() ? " (a bot level)" : "",
                                 "\n  registered ", FormatDate(player.created_ms(), zone),
                                 ", last seen ", FormatDate(player.last_seen_ms(), zone), "\n");
  if (player.ratings().empty()) {
    absl::StrAppend(&out, "  no rated games yet\n");
    return out;
  }
  absl::StrAppend(&out, absl::StrFormat("  %-10s %8s %6s %6s %5s %5s %6s\n", "GAME", "RATING", "+-",
                                        "GAMES", "WINS", "DRAWS", "LOSSES"));
  for (const v1::GameRating& g : player.ratings()) {
    absl::StrAppend(&out, absl::StrFormat("  %-10s %7d%s %6d %6d %5d %5d %6d\n", g.game(),
                                          g.rating(), g.provisional() ? "?" : " ", g.deviation(),
                                          g.games(), g.wins(), g.draws(), g.losses()));
  }
  if (std::any_of(player.ratings().begin(), player.ratings().end(),
                  [](const v1::GameRating& g) { return g.provisional(); })) {
    absl::StrAppend(&out, "  ?: provisional, until a few more rated games settle it\n");
  }
  return out;
}

std::string LeaderboardTable(const std::string& game, const v1::LeaderboardResponse& board) {
  if (board.entries().empty()) {
    return absl::StrCat("No settled ratings in ", game,
                        " yet: ratings settle after a few rated games (ply whois NAME shows "
                        "provisional ones).\n");
  }
  std::string out =
      absl::StrFormat("%4s  %-24s %7s %5s %6s\n", "RANK", "PLAYER", "RATING", "+-", "GAMES");
  for (const v1::LeaderboardEntry& e : board.entries()) {
    absl::StrAppend(&out,
                    absl::StrFormat("%4d  %-24s %7d %5d %6d\n", e.rank(), DisplayText(e.name()),
                                    e.rating(), e.deviation(), e.games()));
  }
  return out;
}

}  // namespace ply::client
