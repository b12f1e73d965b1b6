// libFuzzer target: every game's move parser and replay. The input picks a game (first byte),
// then is read as whitespace-separated move texts played one by one from the initial position:
// legal ones are played, the rest must be refused with an error (never a crash, hang or leak),
// and every few moves the game is rebuilt from its history with ReplayGame and compared.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/registry/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto& games = ply::ListGames();
  const ply::GameInfo& info = games[data[0] % games.size()];
  auto game = ply::CreateGame(info.name);
  if (!game.ok()) __builtin_trap();
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  int played = 0;
  while (!rest.empty() && played < 400) {
    const size_t start = rest.find_first_not_of(" \n\t");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const size_t end = std::min(rest.find_first_of(" \n\t"), rest.size());
    const std::string_view move = rest.substr(0, end);
    rest.remove_prefix(end);
    const uint64_t before = (*game)->Hash();
    if ((*game)->Play(move).ok()) {
      ++played;
      // The canonical text of a legal move parses back to the same move.
      if ((*game)->Undo().ok() == false) __builtin_trap();
      if ((*game)->Hash() != before) __builtin_trap();
      if (!(*game)->Play(move).ok()) __builtin_trap();
    } else if ((*game)->Hash() != before) {
      __builtin_trap();  // a refused move changed the game
    }
    if (played % 16 == 0 || rest.empty()) {
      auto replayed = ply::ReplayGame(info.name, {}, (*game)->History());
      if (!replayed.ok() || (*replayed)->Hash() != (*game)->Hash()) __builtin_trap();
    }
  }
  (void)(*game)->LegalMoves();
  (void)(*game)->Render();
  return 0;
}
