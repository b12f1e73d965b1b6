// pbrain-greedy: a one-ply Gomoku player behind the Gomocup protocol, written apart from the
// engine (it shares no code with gomoku.cc) so that pbrain-ply and the match tool have a second,
// differently built opponent to be measured against.
//
// Its evaluation is the classic window count rather than ply's shape table: every run of five
// cells through a candidate cell that holds no opponent stone (and stays on the board) is worth
// a weight for the number of own stones it would then hold; a cell's score is the sum over its
// windows of that attack value plus `--defence` percent of the same count for the opponent (the
// stones our move takes away from them). The best cell is played, ties broken by `--seed`.
//
//   pbrain-greedy [--defence PERCENT (default 90)] [--seed N] [--weights W1,W2,W3,W4]
//
// W1..W4 weigh windows holding 1..4 own stones after the move (default 1,12,150,2500); a window
// of five always wins. It answers START, RESTART, BEGIN, TURN, BOARD, INFO (ignored: it never
// thinks long), ABOUT and END, freestyle rule only (an overline counts as five).
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kMaxSize = 32;

// The whole of `text` as a number from `least` to `most` (no ply code here: this player stays
// separately written).
template <class T>
bool ParseWhole(const std::string& text, T least, T most, T* out) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < least || value > most) {
    return false;
  }
  *out = value;
  return true;
}

class GreedyBrain {
 public:
  GreedyBrain(std::array<int64_t, 6> weights, int defence_percent, uint64_t seed)
      : weights_(weights), defence_percent_(defence_percent), rng_(seed | 1) {}

  bool Handle(const std::string& line) {
    std::istringstream in(line);
    std::string command;
    in >> command;
    for (char& c : command) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (command.empty()) return true;
    if (command == "END") return false;
    if (command == "START") {
      int size = 0;
      if (!(in >> size) || size < 5 || size > kMaxSize) {
        Say("ERROR unsupported size");
        return true;
      }
      size_ = size;
      Clear();
      Say("OK");
    } else if (command == "RESTART") {
      Clear();
      Say("OK");
    } else if (command == "BEGIN") {
      Clear();
      Move();
    } else if (command == "TURN") {
      int x = -1, y = -1;
      char comma = 0;
      if (!(in >> x >> comma >> y) || !Empty(x, y)) {
        Say("ERROR bad TURN");
        return true;
      }
      board_[y][x] = 2;
      Move();
    } else if (command == "BOARD") {
      Clear();
      std::string row;
      while (std::getline(std::cin, row) && row.rfind("DONE", 0) != 0) {
        int x = -1, y = -1, field = 0;
        if (std::sscanf(row.c_str(), "%d,%d,%d", &x, &y, &field) == 3 && Empty(x, y) &&
            (field == 1 || field == 2)) {
          board_[y][x] = field;
        }
      }
      Move();
    } else if (command == "ABOUT") {
      Say("name=\"pbrain-greedy\", version=\"1\", author=\"ply\"");
    } else if (command != "INFO") {
      Say("UNKNOWN " + command);
    }
    return true;
  }

 private:
  static void Say(const std::string& text) { std::cout << text << std::endl; }

  void Clear() {
    for (auto& row : board_) row.fill(0);
  }
  bool OnBoard(int x, int y) const { return x >= 0 && y >= 0 && x < size_ && y < size_; }
  bool Empty(int x, int y) const { return OnBoard(x, y) && board_[y][x] == 0; }

  // The window value of (x, y) for `who` (1 us, 2 them) as if `who` played there.
  int64_t CellValue(int x, int y, int who) const {
    static constexpr int kDx[4] = {1, 0, 1, 1};
    static constexpr int kDy[4] = {0, 1, 1, -1};
    int64_t total = 0;
    for (int d = 0; d < 4; ++d) {
      for (int start = -4; start <= 0; ++start) {
        int own = 1;
        bool open = true;
        for (int k = start; k < start + 5 && open; ++k) {
          if (k == 0) continue;
          const int cx = x + k * kDx[d], cy = y + k * kDy[d];
          if (!OnBoard(cx, cy) || (board_[cy][cx] != 0 && board_[cy][cx] != who)) {
            open = false;
          } else if (board_[cy][cx] == who) {
            ++own;
          }
        }
        if (open) total += weights_[own];
      }
    }
    return total;
  }

  void Move() {
    int best_x = -1, best_y = -1, ties = 0;
    int64_t best = -1;
    bool any_stone = false;
    for (int y = 0; y < size_; ++y) {
      for (int x = 0; x < size_; ++x) any_stone |= board_[y][x] != 0;
    }
    if (!any_stone) {
      Play(size_ / 2, size_ / 2);
      return;
    }
    for (int y = 0; y < size_; ++y) {
      for (int x = 0; x < size_; ++x) {
        if (board_[y][x] != 0) continue;
        int64_t score = CellValue(x, y, 1) + CellValue(x, y, 2) * defence_percent_ / 100;
        if (score > best) {
          best = score;
          best_x = x;
          best_y = y;
          ties = 1;
        } else if (score == best && Next() % static_cast<uint64_t>(++ties) == 0) {
          best_x = x;
          best_y = y;
        }
      }
    }
    if (best_x < 0) {
      Say("ERROR the board is full");
      return;
    }
    Play(best_x, best_y);
  }

  void Play(int x, int y) {
    board_[y][x] = 1;
    Say(std::to_string(x) + "," + std::to_string(y));
  }

  uint64_t Next() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }

  std::array<int64_t, 6> weights_;
  int defence_percent_;
  uint64_t rng_;
  int size_ = 15;
  std::array<std::array<int, kMaxSize>, kMaxSize> board_{};
};

}  // namespace

int main(int argc, char** argv) {
  // weights_[k]: a window holding k own stones after the move; [5] is five in a row.
  std::array<int64_t, 6> weights = {0, 1, 12, 150, 2500, 10'000'000};
  int defence = 90;
  uint64_t seed = 1;
  constexpr const char* kUsage =
      "usage: pbrain-greedy [--defence PERCENT] [--seed N] [--weights W1,W2,W3,W4]\n"
      "A one-move pattern scorer for matches (pbrain-match); the Gomocup protocol on stdin.\n";
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--defence") {
      if (!ParseWhole(value, 0, 100, &defence)) {
        std::cerr << "--defence takes a percentage from 0 to 100, not '" << value << "'\n";
        return 2;
      }
    } else if (flag == "--seed") {
      if (!ParseWhole<uint64_t>(value, 0, UINT64_MAX, &seed)) {
        std::cerr << "--seed takes a whole number from 0, not '" << value << "'\n";
        return 2;
      }
    } else if (flag == "--weights") {
      if (std::sscanf(value.c_str(), "%ld,%ld,%ld,%ld", &weights[1], &weights[2], &weights[3],
                      &weights[4]) != 4) {
        std::cerr << "--weights takes four numbers: W1,W2,W3,W4\n";
        return 2;
      }
    } else {
      std::cerr << kUsage;
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::cerr << kUsage;
    return 2;
  }
  std::ios::sync_with_stdio(false);
  GreedyBrain brain(weights, defence, seed);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!brain.Handle(line)) break;
  }
  return 0;
}
