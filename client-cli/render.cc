#include "client-cli/render.h"

#include <cctype>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "engine/core/text.h"

namespace ply::client {
namespace {

// One character of a game's text rendering and how it looks in kFancy.
struct Glyph {
  char ascii;
  std::string_view text;
  // SGR parameters ("1;31" is bold red); empty for none.
  std::string_view sgr;
};

struct BoardStyle {
  std::string_view game;
  // The first two are the seats' pieces (first player first); kings and the like follow.
  std::vector<Glyph> pieces;
  // Everything else drawn: empty points, lines, walls, the Tic-Tac-Two grid.
  std::vector<Glyph> marks;
  // Caption rewrites in kFancy, beyond "(C)" -> "(glyph)": "{C}" in the replacement is piece C.
  std::vector<std::pair<std::string_view, std::string_view>> captions;
};

const std::vector<BoardStyle>& Styles() {
  static const auto* styles = new std::vector<BoardStyle>{
      {"connect4", {{'X', "●", "1;31"}, {'O', "●", "1;33"}}, {{'.', "·", "2"}}, {}},
      {"tictactoe", {{'X', "X", "1;31"}, {'O', "O", "1;34"}}, {{'.', "·", "2"}}, {}},
      {"tictactwo",
       {{'X', "X", "1;31"}, {'O', "O", "1;34"}},
       {{'.', "·", "2"}, {'[', "[", "1;36"}, {']', "]", "1;36"}},
       {}},
      {"reversi", {{'X', "●", "1"}, {'O', "○", "1"}}, {{'.', "·", "2;32"}, {'#', "█", "2"}}, {}},
      {"gomoku", {{'X', "●", "1"}, {'O', "○", "1"}}, {{'.', "·", "2"}}, {}},
      {"draughts",
       {{'b', "●", "1;31"}, {'w', "●", "1;97"}, {'B', "◉", "1;31"}, {'W', "◉", "1;97"}},
       {},
       {{"B and W are kings", "{B} {W} are kings"}}},
      {"morris",
       {{'W', "○", "1"}, {'B', "●", "1"}},
       {{'.', "·", "2"}, {'-', "─", "2"}, {'|', "│", "2"}},
       {}},
  };
  return *styles;
}

const BoardStyle& StyleOf(std::string_view game) {
  static const BoardStyle* none = new BoardStyle{"", {}, {}, {}};
  for (const BoardStyle& s : Styles()) {
    if (s.game == game) return s;
  }
  return *none;
}

const Glyph* Find(const std::vector<Glyph>& glyphs, char c) {
  for (const Glyph& g : glyphs) {
    if (g.ascii == c) return &g;
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

std::string FancyCaption(std::string_view line, const BoardStyle& style) {
  std::string out(line);
  for (const auto& [from, to] : style.captions) {
    std::string replacement(to);
    for (const Glyph& g : style.pieces) {
      replacement = absl::StrReplaceAll(
          replacement, {{absl::StrCat("{", std::string(1, g.ascii), "}"), Sgr(g.text, g.sgr)}});
    }
    out = absl::StrReplaceAll(out, {{Absl(from), replacement}});
  }
  for (const Glyph& g : style.pieces) {
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

}  // namespace

Look ChooseLook(bool stdout_is_tty, const char* no_color) {
  if (!stdout_is_tty) return Look::kPlain;
  if (no_color != nullptr && no_color[0] != '\0') return Look::kPlain;
  return Look::kFancy;
}

std::string RenderBoard(const AnyGame& game, Look look) {
  const std::string after = game.Render();
  if (look == Look::kPlain) return after;
  const BoardStyle& style = StyleOf(game.Info().name);

  // The last move's squares are those whose text it changed.
  std::vector<std::string> before;
  if (!game.History().empty()) {
    std::unique_ptr<AnyGame> previous = game.Clone();
    if (previous->Undo().ok()) before = Lines(previous->Render());
  }
  const std::vector<std::string> lines = Lines(after);
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

std::string SideGlyph(std::string_view game, int seat, Look look) {
  const BoardStyle& style = StyleOf(game);
  if (seat < 0 || seat >= static_cast<int>(style.pieces.size())) return "";
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

}  // namespace ply::client
