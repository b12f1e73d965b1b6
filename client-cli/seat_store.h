// Seat tokens kept between runs, so that `ply join MATCH` resumes a seat and `ply move MATCH MOVE`
// can act for it; and the player this machine logged in as on each lobby (`ply login`). One JSON
// file, $XDG_CONFIG_HOME/ply/seats.json (or ~/.config/ply/seats.json), readable by its owner only
// (0600; the folder 0700): a token is the only proof of a seat.
#ifndef PLY_CLIENT_CLI_SEAT_STORE_H_
#define PLY_CLIENT_CLI_SEAT_STORE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace ply::client {

struct PlayerLogin {
  std::string name;
  std::string key;
};

struct SeatTicket {
  int64_t match_id = 0;
  int seat = -1;
  std::string token;
  std::string name;
};

class SeatStore {
 public:
  // Where the file lives by default (see above); empty when neither variable is set.
  static std::string DefaultPath();
  explicit SeatStore(std::string path) : path_(std::move(path)) {}

  // The seat held in match `match_id` on lobby `server` ("127.0.0.1:50050", or a list of its
  // instances "10.0.0.1:50050,10.0.0.2:50050"), if any: saved under that name, or under a list
  // that shares an instance with it.
  std::optional<SeatTicket> Find(const std::string& server, int64_t match_id) const;
  // Records (or replaces) the seat; the file is rewritten whole and atomically.
  absl::Status Save(const std::string& server, const SeatTicket& ticket);
  // The player logged in on lobby `server` (or a list sharing an instance with it), if any.
  std::optional<PlayerLogin> Player(const std::string& server) const;
  // Makes `player` the one logged in on `server`, and keeps their key among every key this
  // file has held for that lobby (logging in as someone else must not lose it).
  absl::Status SavePlayer(const std::string& server, const PlayerLogin& player);
  // A key this file keeps for player `name` (ignoring case) on `server`, if any.
  std::optional<std::string> KnownKey(const std::string& server, const std::string& name) const;
  const std::string& path() const { return path_; }

 private:
  // Replaces the file with `text`, atomically and readable by its owner only.
  absl::Status Write(const std::string& text);
  std::string path_;
};

}  // namespace ply::client

#endif  // PLY_CLIENT_CLI_SEAT_STORE_H_
