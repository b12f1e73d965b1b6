// libFuzzer target: what a request carries before any move is played, as the lobby and the bot
// service validate it: a game name, option text (ParseOptions, as tools and clients send it),
// and a move list replayed with ReplayGame. Bad input must come back as an error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/options.h"
#include "engine/registry/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Three fields separated by newlines: game name, options, moves.
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> fields;
  for (int i = 0; i < 2; ++i) {
    const size_t nl = in.find('\n');
    fields.emplace_back(in.substr(0, nl));
    in.remove_prefix(nl == std::string_view::npos ? in.size() : nl + 1);
  }
  std::vector<std::string> moves;
  while (!in.empty() && moves.size() < 300) {
    const size_t sp = in.find(' ');
    moves.emplace_back(in.substr(0, sp));
    in.remove_prefix(sp == std::string_view::npos ? in.size() : sp + 1);
  }
  auto options = ply::ParseOptions(fields[1]);
  if (!options.ok()) return 0;
  auto game = ply::ReplayGame(fields[0], *options, moves);
  if (game.ok()) {
    (void)(*game)->Status();
    (void)(*game)->LegalMoves();
  }
  return 0;
}
