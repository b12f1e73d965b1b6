// pbrain-ply: ply's Gomoku engine behind the Gomocup text protocol (the "pbrain" interface of
// Piskvork and the other tournament managers). One command a line on stdin, answers on stdout,
// each flushed:
//
//   START n        new n x n game (5..20)               -> OK | ERROR ...
//   RESTART        new game of the same size            -> OK
//   BEGIN          we move first                        -> x,y
//   TURN x,y       the opponent played x,y              -> x,y
//   BOARD ... DONE a whole position, lines "x,y,field" (1 = ours, 2 = theirs)  -> x,y
//   TAKEBACK x,y   take back the last stone (at x,y)    -> OK | ERROR ...
//   INFO key value timeout_turn, timeout_match, time_left (ms), rule (bit 0: exact five)
//   ABOUT          -> name="...", version="...", ...
//   END            exit
//
// Coordinates are 0-based, x the column from the left, y the row from the top. While thinking
// the engine reports its search in MESSAGE lines (depth, score, nodes, time). Renju and Caro
// rules are not supported.
//
// Command line: `pbrain-ply [--level NAME] [--seed N] [--nodes N] [--tt-mb N]`. Without a level
// it plays at full strength on the time the manager gives (timeout_turn, or a share of
// time_left); a level (beginner, easy, medium, hard, greedy: Gomoku::Levels()) takes that level's
// dials and the smaller of its own time and the manager's, and then chooses the moves the lobby's
// bot of that level chooses from the same position and budget (the same Gomoku::SetTimeUse and
// Gomoku::SearchRoot the registry runs; the search's seed for a position is
// Mix64(seed ^ position hash); tests/gomoku_test.cc compares them). At every level the search
// runs inside SearchRoot's threat checks, which reach as far as the level
// (Gomoku::RootVctDepth). The seed (default: from the clock)
// also picks among opening moves that score alike at full strength, so that two games need not
// repeat. `--nodes` adds a node budget to every move (the same position, seed and budget then
// give the same move on any machine); `--tt-mb` sizes the transposition table (default 64 MiB;
// the bot service's workers have 16).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/core/random.h"
#include "engine/core/text.h"
#include "engine/games/gomoku/gomoku.h"
#include "engine/search/search.h"

namespace ply {
namespace {

class Brain {
 public:
  Brain(std::optional<Difficulty> level, uint64_t seed, int64_t max_nodes, size_t tt_megabytes)
      : searcher_(std::make_unique<Searcher<Gomoku>>(tt_megabytes)),
        level_(std::move(level)),
        seed_(seed),
        max_nodes_(max_nodes) {}

  // Handles one command line; false once the manager says END.
  bool Handle(const std::string& line) {
    std::string command, rest;
    SplitCommand(line, &command, &rest);
    if (command.empty()) return true;
    if (command == "END") return false;
    if (command == "START") {
      int size = 0;
      if (!ParseInt(rest, &size) || size < 5 || size > Gomoku::kMaxSize) {
        Say(absl::StrCat("ERROR unsupported board size '", rest, "' (5..", Gomoku::kMaxSize, ")"));
        return true;
      }
      size_ = size;
      NewGame();
      Say("OK");
    } else if (command == "RESTART") {
      if (!NeedGame()) return true;
      NewGame();
      Say("OK");
    } else if (command == "BEGIN") {
      if (!NeedGame()) return true;
      if (game_->stones() != 0) NewGame();
      Think();
    } else if (command == "TURN") {
      if (!NeedGame()) return true;
      std::optional<Gomoku::Move> move = ParseCell(rest);
      if (!move) return true;
      Play(*move);
      Think();
    } else if (command == "BOARD") {
      ReadBoard();
    } else if (command == "TAKEBACK") {
      if (!NeedGame()) return true;
      std::optional<Gomoku::Move> move = ParseCell(rest, /*must_be_empty=*/false);
      if (!move) return true;
      if (history_.empty() || history_.back() != *move) {
        Say("ERROR only the last stone can be taken back");
        return true;
      }
      Gomoku::UndoInfo undo;
      game_->Unmake(history_.back(), undo);
      history_.pop_back();
      Say("OK");
    } else if (command == "INFO") {
      Info(rest);
    } else if (command == "ABOUT") {
      Say("name=\"pbrain-ply\", version=\"0.1\", author=\"ply\", country=\"\"");
    } else {
      Say(absl::StrCat("UNKNOWN command '", command, "'"));
    }
    return true;
  }

 private:
  static void Say(const std::string& text) { std::cout << text << std::endl; }

  static void SplitCommand(const std::string& line, std::string* command, std::string* rest) {
    std::string_view text = Trim(line);
    size_t space = text.find_first_of(" \t");
    std::string_view head = text.substr(0, space);
    command->clear();
    for (char c : head)
      command->push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    *rest = space == std::string_view::npos ? "" : std::string(Trim(text.substr(space)));
  }

  bool NeedGame() {
    if (game_) return true;
    Say("ERROR no game: send START first");
    return false;
  }

  void NewGame() {
    GameOptions options = {{"size", std::to_string(size_)},
                           {"rule", exact_five_ ? "exact" : "freestyle"}};
    game_ = *Gomoku::Create(options);
    history_.clear();
    searcher_->Clear();
  }

  // Rebuilds the game under the current rule with the same stones (the rule may arrive by
  // INFO after START).
  void Rebuild() {
    if (!game_) return;
    std::vector<Gomoku::Move> moves = history_;
    NewGame();
    for (Gomoku::Move m : moves) {
      if (game_->GetOutcome() != Outcome::kOngoing) break;
      Play(m);
    }
  }

  void Play(Gomoku::Move m) {
    Gomoku::UndoInfo undo;
    game_->Make(m, undo);
    history_.push_back(m);
  }

  // "x,y" to a cell; says ERROR and returns nothing when it is not one.
  std::optional<Gomoku::Move> ParseCell(std::string_view text, bool must_be_empty = true) {
    size_t comma = text.find(',');
    int x = -1, y = -1;
    if (comma == std::string_view::npos || !ParseInt(text.substr(0, comma), &x) ||
        !ParseInt(text.substr(comma + 1), &y) || x < 0 || y < 0 || x >= game_->size() ||
        y >= game_->size()) {
      Say(absl::StrCat("ERROR '", Absl(text), "' is not a cell x,y on this board"));
      return std::nullopt;
    }
    Gomoku::Move m = Gomoku::CellAt(x, y);
    if (must_be_empty && (!game_->IsEmpty(m) || game_->GetOutcome() != Outcome::kOngoing)) {
      Say(absl::StrCat("ERROR ", x, ",", y, " cannot be played"));
      return std::nullopt;
    }
    return m;
  }

  void ReadBoard() {
    std::vector<Gomoku::Move> mine, theirs;
    std::string line;
    bool ok = static_cast<bool>(game_);
    while (std::getline(std::cin, line)) {
      std::string_view text = Trim(line);
      if (text == "DONE" || text == "done") break;
      if (!ok) continue;
      int x = -1, y = -1, field = 0;
      std::vector<std::string> parts;
      std::stringstream in{std::string(text)};
      for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
      if (parts.size() != 3 || !ParseInt(parts[0], &x) || !ParseInt(parts[1], &y) ||
          !ParseInt(parts[2], &field) || x < 0 || y < 0 || x >= size_ || y >= size_) {
        Say(absl::StrCat("ERROR bad BOARD line '", Absl(text), "'"));
        ok = false;
        continue;
      }
      if (field == 1) mine.push_back(Gomoku::CellAt(x, y));
      if (field == 2) theirs.push_back(Gomoku::CellAt(x, y));
    }
    if (!game_) {
      Say("ERROR no game: send START first");
      return;
    }
    if (!ok) return;
    // It is our turn: with as many stones as the opponent we are Black, with one fewer White.
    const std::vector<Gomoku::Move>* black = &mine;
    const std::vector<Gomoku::Move>* white = &theirs;
    if (theirs.size() == mine.size() + 1) {
      std::swap(black, white);
    } else if (theirs.size() != mine.size()) {
      Say(absl::StrCat("ERROR ", mine.size(), " own and ", theirs.size(),
                       " opponent stones: not our turn"));
      return;
    }
    NewGame();
    for (size_t i = 0; i < black->size(); ++i) {
      for (const auto* side : {black, white}) {
        if (i >= side->size()) continue;
        Gomoku::Move m = (*side)[i];
        if (!game_->IsEmpty(m) || game_->GetOutcome() != Outcome::kOngoing) {
          Say(absl::StrCat("ERROR the stone at ", Gomoku::XOf(m), ",", Gomoku::YOf(m),
                           " cannot be placed"));
          return;
        }
        Play(m);
      }
    }
    Think();
  }

  void Info(const std::string& rest) {
    std::string key, value;
    SplitCommand(rest, &key, &value);
    int64_t number = 0;
    if (!absl::SimpleAtoi(value, &number)) return;
    if (key == "TIMEOUT_TURN") timeout_turn_ms_ = number;
    if (key == "TIMEOUT_MATCH") timeout_match_ms_ = number;
    if (key == "TIME_LEFT") time_left_ms_ = number;
    if (key == "RULE") {
      bool exact = (number & 1) != 0;
      if (exact != exact_five_) {
        exact_five_ = exact;
        Rebuild();
      }
    }
  }

  // The time for this move: the turn limit, or a share of what is left of the match, less a
  // margin for the protocol's round trip and the process being scheduled late.
  int64_t MoveBudgetMs() const {
    // A turn limit of 0 asks for moves as fast as possible.
    int64_t budget = timeout_turn_ms_ > 0 ? timeout_turn_ms_ : 100;
    if (timeout_match_ms_ > 0 && time_left_ms_ > 0) {
      int64_t moves_left = std::max(10, (game_->size() * game_->size() - game_->stones()) / 4);
      budget = std::min(budget, time_left_ms_ / moves_left);
    }
    if (level_ && level_->time_ms > 0) budget = std::min<int64_t>(budget, level_->time_ms);
    return std::max<int64_t>(10, budget - std::min<int64_t>(60, budget / 10 + 10));
  }

  void Think() {
    if (game_->GetOutcome() != Outcome::kOngoing) {
      Say("ERROR the game is over");
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    const int64_t budget = MoveBudgetMs();
    // Gomoku::SetTimeUse: no iteration starts once 60% of the budget is spent; the one running
    // at the deadline still counts for the root moves it finished. Gomoku::SearchRoot wraps the
    // search in the root's threat checks (the same as the registry's levels get, as far as the
    // level reaches): a win of ours played at once, the candidates that lose to the
    // opponent's threats left out (within 30% of the budget), and a tenth of the budget kept for
    // the check after the search.
    SearchLimits limits{
        .max_nodes = max_nodes_, .time_ms = budget, .seed = Mix64(seed_ ^ game_->Hash())};
    if (level_) {
      limits.max_depth = level_->max_depth;
      limits.eval_noise = level_->eval_noise;
      limits.random_move_chance = level_->random_move_chance;
      if (!level_->policy.empty()) {
        auto result = Gomoku::PlayPolicy(*game_, level_->policy, limits);
        Reply(result->best_move);
        return;
      }
    }
    Gomoku::SetTimeUse(limits);
    const bool vary = OpeningVariety();
    auto search = [&](const SearchLimits& given) {
      SearchLimits l = given;
      // With variety, the main search has half the budget and the other candidates the rest.
      if (vary) {
        l.time_ms = std::min<int64_t>(l.time_ms, budget / 2);
        l.soft_time_ms = std::min<int64_t>(l.soft_time_ms, budget * 3 / 10);
      }
      auto r = searcher_->Search(*game_, l, [&](const SearchResult<Gomoku::Move>& it) {
        std::vector<std::string> pv;
        for (Gomoku::Move m : it.pv) pv.push_back(game_->MoveToText(m));
        Say(absl::StrCat("MESSAGE depth ", it.depth, " score ", it.score, " nodes ", it.nodes,
                         " nps ", static_cast<int64_t>(it.nodes_per_second()), " time ",
                         static_cast<int64_t>(it.elapsed_ms), " pv ", absl::StrJoin(pv, " ")));
      });
      if (vary && r.depth >= 2 && !r.exact) {
        // Its share ends where the search's would have: at 90% of the turn.
        const int64_t before = SinceMs(start) - static_cast<int64_t>(r.elapsed_ms);
        r.best_move = VaryOpening(r, l, budget * 9 / 10 - before);
        r.pv = {r.best_move};
      }
      return r;
    };
    std::string note;
    auto result = Gomoku::SearchRoot(*game_, limits, search, &note);
    const Gomoku::Move m = result.best_move;
    if (result.depth == 0 && result.exact && result.score > 0 && !note.empty()) {
      // "CELL wins by continuous fours|threats": played before any search.
      Say(absl::StrCat("MESSAGE played ", note, ", after ", SinceMs(start), " of ", budget, " ms"));
    } else {
      if (!note.empty()) Say(absl::StrCat("MESSAGE ", note));
      Say(absl::StrCat("MESSAGE played ", game_->MoveToText(m), " depth ", result.depth, " after ",
                       SinceMs(start), " of ", budget, " ms"));
    }
    Reply(m);
  }

  static int64_t SinceMs(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  }

  void Reply(Gomoku::Move m) {
    Play(m);
    Say(absl::StrCat(Gomoku::XOf(m), ",", Gomoku::YOf(m)));
  }

  // The first moves of each side at full strength pick among the root moves whose score is
  // within kVarietyMargin of the best, so that the same opponent does not get the same game.
  bool OpeningVariety() const { return !level_ && game_->stones() < kVarietyStones; }

  // Searches each other candidate (in the search's own order) one ply shallower than the main
  // search reached, with what is left of the budget, and picks one at random (seeded) among
  // those that score within the margin. A candidate not finished in time is left out.
  Gomoku::Move VaryOpening(const SearchResult<Gomoku::Move>& main, const SearchLimits& limits,
                           int64_t budget) {
    MoveList<Gomoku::Move, Gomoku::kMaxMoves> candidates;
    game_->GenerateSearchMoves(candidates);
    std::vector<std::pair<int, Gomoku::Move>> ranked;
    for (Gomoku::Move c : candidates) {
      if (c != main.best_move) ranked.push_back({game_->MoveOrderScore(c), c});
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a > b; });
    if (ranked.size() > kVarietyCandidates) ranked.resize(kVarietyCandidates);
    std::vector<Gomoku::Move> good = {main.best_move};
    const int64_t left = budget - static_cast<int64_t>(main.elapsed_ms);
    for (size_t i = 0; i < ranked.size(); ++i) {
      const int64_t share = left / static_cast<int64_t>(ranked.size() + 1);
      if (share < 5) break;
      Gomoku::UndoInfo undo;
      game_->Make(ranked[i].second, undo);
      SearchLimits child = limits;
      child.max_depth = main.depth - 1;
      child.time_ms = share;
      child.soft_time_ms = 0;
      child.keep_partial_iteration = false;
      auto r = searcher_->Search(*game_, child);
      game_->Unmake(ranked[i].second, undo);
      if (r.depth == main.depth - 1 && -r.score >= main.score - kVarietyMargin) {
        good.push_back(ranked[i].second);
      }
    }
    Rng rng(Mix64(seed_ ^ game_->Hash() ^ 0x7a11));
    Gomoku::Move pick = good[rng.Below(good.size())];
    Say(absl::StrCat("MESSAGE variety: ", good.size(), " moves within ", kVarietyMargin,
                     " of the best, playing ", game_->MoveToText(pick)));
    return pick;
  }

  static constexpr int kVarietyStones = 6;
  static constexpr size_t kVarietyCandidates = 4;
  static constexpr Score kVarietyMargin = 50;

  std::unique_ptr<Searcher<Gomoku>> searcher_;
  std::optional<Difficulty> level_;
  uint64_t seed_ = 0;
  int64_t max_nodes_ = 0;  // 0: none
  std::optional<Gomoku> game_;
  std::vector<Gomoku::Move> history_;
  int size_ = 15;
  bool exact_five_ = false;
  int64_t timeout_turn_ms_ = 5000;
  int64_t timeout_match_ms_ = 0;
  int64_t time_left_ms_ = 0;
};

}  // namespace
}  // namespace ply

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::optional<ply::Difficulty> level;
  uint64_t seed =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  int64_t max_nodes = 0;
  size_t tt_megabytes = 64;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--level" && i + 1 < argc) {
      std::vector<ply::Difficulty> levels = ply::Gomoku::Levels();
      const ply::Difficulty* found = ply::FindLevel(levels, argv[++i]);
      if (found == nullptr) {
        std::cerr << "pbrain-ply: unknown level '" << argv[i] << "'; levels:";
        for (const auto& l : levels) std::cerr << " " << l.name;
        std::cerr << "\n";
        return 2;
      }
      level = *found;
    } else if (arg == "--seed" && i + 1 < argc && absl::SimpleAtoi(argv[i + 1], &seed)) {
      ++i;
    } else if (arg == "--nodes" && i + 1 < argc && absl::SimpleAtoi(argv[i + 1], &max_nodes) &&
               max_nodes >= 0) {
      ++i;
    } else if (arg == "--tt-mb" && i + 1 < argc && absl::SimpleAtoi(argv[i + 1], &tt_megabytes) &&
               tt_megabytes >= 1 && tt_megabytes <= 4096) {
      ++i;
    } else {
      const bool help = arg == "--help" || arg == "-h";
      (help ? std::cout : std::cerr)
          << "usage: pbrain-ply [--level NAME] [--seed N] [--nodes N] [--tt-mb 1..4096]\n"
             "  --level  play a lobby level (without: full strength on the manager's time)\n"
             "  --seed   the random choices' seed (default: from the clock)\n"
             "  --nodes  a node budget for every move besides the clock (0: none)\n"
             "  --tt-mb  transposition table size in MiB (default 64)\n"
             "Then the Gomocup protocol on stdin/stdout (START, BEGIN, TURN, BOARD, INFO, END).\n";
      return help ? 0 : 2;
    }
  }
  auto brain = std::make_unique<ply::Brain>(level, seed, max_nodes, tt_megabytes);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!brain->Handle(line)) break;
  }
  return 0;
}
