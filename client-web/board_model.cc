#include "client-web/board_model.h"

#include <cctype>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "engine/registry/registry.h"

namespace ply::web {
namespace {

using nlohmann::json;

std::vector<std::string> Lines(std::string_view text) {
  return absl::StrSplit(absl::string_view(text.data(), text.size()), '\n');
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Codes of one row of a square-grid game ("  3 . X O # .  3", "2  .[. . X].", ". . X O"), or ""
// when the line is something else (coordinates, captions). Row labels at either end are dropped.
std::string GridRow(std::string line) {
  for (char& c : line) {
    if (c == '[' || c == ']') c = ' ';
  }
  std::vector<std::string> tokens = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (!tokens.empty() && AllDigits(tokens.front())) tokens.erase(tokens.begin());
  if (!tokens.empty() && AllDigits(tokens.back())) tokens.pop_back();
  std::string row;
  for (const std::string& t : tokens) {
    if (t == ".") {
      row += '0';
    } else if (t == "X") {
      row += '1';
    } else if (t == "O") {
      row += '2';
    } else if (t == "#") {
      row += '#';
    } else {
      return "";
    }
  }
  return row;
}

// The number after `label` in `line` ("in hand X 4 O 3": label "X " gives 4); -1 if absent.
int NumberAfter(std::string_view line, std::string_view label) {
  const size_t at = line.find(label);
  if (at == std::string_view::npos) return -1;
  size_t i = at + label.size();
  size_t j = i;
  while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
  int n = -1;
  if (!absl::SimpleAtoi(absl::string_view(line.data() + i, j - i), &n)) return -1;
  return n;
}

// Connect Four, Tic-Tac-Toe, Tic-Tac-Two, Reversi and Gomoku: rows of '.', 'X', 'O' and '#'.
json GridBoard(const std::vector<std::string>& lines) {
  json rows = json::array();
  size_t width = 0;
  json model = json::object();
  for (const std::string& line : lines) {
    std::string row = GridRow(line);
    if (row.empty()) {
      // A movable grid's caption (Tic-Tac-Two): "grid b2-d4, X to move, in hand X 4 O 4".
      if (line.rfind("grid ", 0) == 0 && line.size() >= 10) {
        model["grid"] = {line[5] - 'a', line[6] - '1', line[8] - 'a', line[9] - '1'};
        if (const size_t at = line.find("in hand X "); at != std::string::npos) {
          const std::string_view rest = std::string_view(line).substr(at);
          model["hand"] = {NumberAfter(rest, "in hand X "), NumberAfter(rest, " O ")};
        }
      }
      continue;
    }
    if (width != 0 && row.size() != width) return nullptr;
    width = row.size();
    rows.push_back(row);
  }
  if (rows.empty()) return nullptr;
  model["rows"] = rows;
  return model;
}

// Nine Men's Morris: ranks 7..1 on the even lines, files a..g every four characters from the
// third; a point is '.', 'W' (White, the first player) or 'B'.
json MorrisBoard(const std::vector<std::string>& lines) {
  json rows = json::array();
  json model = json::object();
  for (const std::string& line : lines) {
    if (line.size() < 3 || !std::isdigit(static_cast<unsigned char>(line[0])) || line[1] != ' ') {
      if (line.find("White (W): ") != std::string::npos) {
        model["hand_white"] = NumberAfter(line, "board, ");
      } else if (line.find("Black (B): ") != std::string::npos) {
        model["hand_black"] = NumberAfter(line, "board, ");
      }
      continue;
    }
    std::string row;
    for (size_t col = 0; col < 7; ++col) {
      const size_t at = 2 + 4 * col;
      const char c = at < line.size() ? line[at] : ' ';
      row += c == '.' ? '0' : c == 'W' ? '1' : c == 'B' ? '2' : ' ';
    }
    rows.push_back(row);
  }
  if (rows.size() != 7) return nullptr;
  model["rows"] = rows;
  if (model.contains("hand_white") && model.contains("hand_black")) {
    model["hand"] = {model["hand_white"], model["hand_black"]};
  }
  model.erase("hand_white");
  model.erase("hand_black");
  return model;
}

// English draughts: eight rows of the dark squares, a piece ('b', 'w', kings 'B', 'W') or the
// square's number right-aligned at column 2 + 3 * file. Black moves first.
json DraughtsBoard(const std::vector<std::string>& lines) {
  json rows = json::array();
  for (const std::string& line : lines) {
    if (rows.size() == 8) break;
    if (line.size() < 6 || line.find('-') == std::string::npos) continue;
    std::string row(8, ' ');
    const int r = static_cast<int>(rows.size());
    for (int col = (r % 2 == 0) ? 1 : 0; col < 8; col += 2) {
      const size_t at = 2 + 3 * col;
      const char c = at < line.size() ? line[at] : ' ';
      row[col] = c == 'b' ? '1' : c == 'w' ? '2' : c == 'B' ? '3' : c == 'W' ? '4' : '0';
    }
    rows.push_back(row);
  }
  if (rows.size() != 8) return nullptr;
  return json{{"rows", rows}};
}

}  // namespace

json BoardModel(std::string_view game, std::string_view text) {
  const std::vector<std::string> lines = Lines(text);
  // The text's shape follows the board the game declares (its kLook).
  const GameInfo* info = FindGame(game);
  const std::string_view board = info != nullptr ? info->look.board : "squares";
  if (board == "morris") return MorrisBoard(lines);
  if (board == "dark-squares") return DraughtsBoard(lines);
  return GridBoard(lines);
}

}  // namespace ply::web
