// What the command line asks of the lobby, as requests: `ply new`'s arguments and seat flags as a
// CreateMatchRequest, and `ply join --seat N` checked against the match. Seats are counted from 1
// here, as people count them, and from 0 in the requests, as the lobby does. Errors are the
// user's: a sentence that says what to type instead.
#ifndef PLY_CLIENT_CLI_REQUESTS_H_
#define PLY_CLIENT_CLI_REQUESTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ply/v1/lobby.pb.h"

namespace ply::client {

// `ply new GAME [k=v ...]` with its flags.
struct NewFlags {
  // GAME, then options k=v.
  std::vector<std::string> args;
  // --seat1, --seat2: me, open or bot:LEVEL; unset: the first is `me`, the other `open`.
  std::string seat1;
  std::string seat2;
  // --opt k=v[,k=v]
  std::string opt;
  // --clock MINUTES[+SECONDS]
  std::string clock;
  // --pacing_ms; < 0: the lobby's default.
  int64_t pacing_ms = -1;
  // The name to sit down under.
  std::string name;
};

struct NewMatch {
  v1::CreateMatchRequest request;
  // The seat the user plays (from 0), -1 for none.
  int mine = -1;
};

absl::StatusOr<NewMatch> NewMatchRequest(const NewFlags& flags);

// --seat's text as the lobby counts seats (from 0); -1 (the first open seat) when empty.
absl::StatusOr<int> ParseSeatFlag(const std::string& text);

// Why `seat` (from 0) of `match` cannot be taken, said counting from 1; OK when it can.
absl::Status CheckSeat(const v1::Match& match, int seat);

}  // namespace ply::client

#endif  // PLY_CLIENT_CLI_REQUESTS_H_
