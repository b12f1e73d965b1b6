// What a game record carries besides its moves, for the record formats a game offers (PDN for
// draughts). Each format writes these facts in its own way; a client fills them from a match
// without knowing the format.
#ifndef PLY_ENGINE_CORE_RECORD_H_
#define PLY_ENGINE_CORE_RECORD_H_

#include <optional>
#include <string>
#include <vector>

namespace ply {

struct RecordHeader {
  // Where the game was played: an event name and a site (a server address); empty if unknown.
  std::string event;
  std::string site;
  // The day the game started, "YYYY-MM-DD" in UTC; empty if unknown.
  std::string date;
  // The players' names by seat, first player first; empty if unknown.
  std::vector<std::string> players;
  // The result when it is known from outside the moves (a resignation, a time loss, an agreed
  // draw): the winning seat, or -1 for a draw. Without it a format derives the result from the
  // final position (a game still going on has none).
  std::optional<int> winner;
};

}  // namespace ply

#endif  // PLY_ENGINE_CORE_RECORD_H_
