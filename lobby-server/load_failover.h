// The load of the lobby failover scenario (deploy/local/lobby-failover): people, bots and
// spectators using several lobby instances at once while the scenario kills and restarts them.
// Everything a user would notice is counted: acknowledged moves that were not stored, matches
// that ended for a failure, spectators that missed a move or saw one twice, the longest time a
// match stood still, and how long an event took from its commit to a spectator.
#ifndef PLY_LOBBY_SERVER_LOAD_FAILOVER_H_
#define PLY_LOBBY_SERVER_LOAD_FAILOVER_H_

#include <string>
#include <vector>

namespace ply {

struct FailoverOptions {
  // The instances' addresses.
  std::vector<std::string> lobbies;
  int seconds = 120;
  int spectators = 200;
  // Bot-vs-bot matches kept running.
  int bot_matches = 4;
  // People: each plays one human-vs-human match at a time, both seats, through every instance
  // in turn.
  int players = 8;
};

// Runs the load for `seconds`, then checks and prints the table; returns 0 when nothing was
// lost, no match ended for a failure and no spectator missed or repeated a move.
int RunFailover(const FailoverOptions& options);

}  // namespace ply

#endif  // PLY_LOBBY_SERVER_LOAD_FAILOVER_H_
