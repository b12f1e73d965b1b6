#include "engine/registry/registry.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/core/text.h"
#include "engine/games/connect4/connect4.h"
#include "engine/games/draughts/draughts.h"
#include "engine/games/gomoku/gomoku.h"
#include "engine/games/morris/morris.h"
#include "engine/games/reversi/reversi.h"
#include "engine/games/tictactoe/tictactoe.h"
#include "engine/games/tictactwo/tictactwo.h"
#include "engine/registry/game_adapter.h"

namespace ply {
namespace {

struct Entry {
  GameInfo info;
  std::function<absl::StatusOr<std::unique_ptr<AnyGame>>(const GameOptions&, const GameInfo*)>
      create;
};

template <Game G>
Entry Register(std::string title, std::string description, std::vector<std::string> players) {
  Entry e;
  e.info = GameInfo{.name = std::string(G::kName),
                    .title = std::move(title),
                    .description = std::move(description),
                    .options = G::OptionInfos(),
                    .levels = G::Levels(),
                    .player_names = std::move(players),
                    .ladder = ShippedLadder(G::kName)};
  e.create = [](const GameOptions& options,
                const GameInfo* info) -> absl::StatusOr<std::unique_ptr<AnyGame>> {
    absl::Status known = CheckKnownOptions(G::kName, options, G::OptionInfos());
    if (!known.ok()) return known;
    absl::StatusOr<G> game = G::Create(options);
    if (!game.ok()) return game.status();
    return std::make_unique<GameAdapter<G>>(*std::move(game), info);
  };
  return e;
}

const std::vector<Entry>& Entries() {
  static const auto* entries = new std::vector<Entry>{
      Register<Connect4>("Connect Four",
                         "drop discs into columns; four in a row wins (any size, or on a cylinder "
                         "where the columns wrap around)",
                         {"Red", "Yellow"}),
      Register<TicTacToe>("Tic-Tac-Toe", "three in a row on a 3x3 board", {"X", "O"}),
      Register<TicTacTwo>("Tic-Tac-Two",
                          "three in a row inside a 3x3 grid that moves on a 5x5 board; pieces "
                          "and the grid move after the unlock (or the big 7x7 preset)",
                          {"X", "O"}),
      Register<Reversi>("Reversi",
                        "Othello: outflank and turn over the opponent's discs; most discs wins "
                        "(even sizes 4..16, rectangles, blocked cells)",
                        {"Black", "White"}),
      Register<Gomoku>("Gomoku",
                       "five in a row on a 15x15 board (sizes 5..20; free-style or exact five)",
                       {"Black", "White"}),
      Register<Draughts>("English draughts",
                         "checkers on 8x8: mandatory captures, multi-jumps, kings; standard "
                         "square numbers 1-32",
                         {"Black", "White"}),
      Register<Morris>("Nine Men's Morris",
                       "place, move and fly nine pieces on the 24-point board; a mill takes a "
                       "piece; three pieces fly",
                       {"White", "Black"}),
  };
  return *entries;
}

}  // namespace

const std::vector<GameInfo>& ListGames() {
  static const auto* infos = [] {
    auto* v = new std::vector<GameInfo>;
    for (const Entry& e : Entries()) v->push_back(e.info);
    return v;
  }();
  return *infos;
}

const GameInfo* FindGame(std::string_view name) {
  for (const Entry& e : Entries()) {
    if (e.info.name == name) return &e.info;
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<AnyGame>> CreateGame(std::string_view name,
                                                    const GameOptions& options) {
  for (const Entry& e : Entries()) {
    if (e.info.name == name) return e.create(options, &e.info);
  }
  std::vector<std::string> names;
  for (const Entry& e : Entries()) names.push_back(e.info.name);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown game '", Absl(name), "' (known: ", absl::StrJoin(names, ", "), ")"));
}

absl::StatusOr<std::unique_ptr<AnyGame>> ReplayGame(std::string_view name,
                                                    const GameOptions& options,
                                                    const std::vector<std::string>& moves) {
  absl::StatusOr<std::unique_ptr<AnyGame>> game = CreateGame(name, options);
  if (!game.ok()) return game.status();
  for (size_t i = 0; i < moves.size(); ++i) {
    absl::Status s = (*game)->Play(moves[i]);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("move ", i + 1, " '", moves[i], "': ", s.message()));
    }
  }
  return game;
}

std::string SearchReport::ScoreText() const {
  if (IsMateScore(score)) {
    int plies = MatePlies(score);
    return plies > 0 ? absl::StrCat("win in ", plies) : absl::StrCat("loss in ", -plies);
  }
  if (exact && score == 0) return "draw";
  return score > 0 ? absl::StrCat("+", score) : absl::StrCat(score);
}

}  // namespace ply
