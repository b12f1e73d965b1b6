// A web player's presence in the lobby. The lobby counts a seat as present while a WatchMatch
// stream carrying the seat's token is open; the page's own event stream is shared by everyone
// watching the match through this gateway (watch_hub.h) and carries no token, so without this a
// player looking at the page would count as gone and could be claimed against. The page says
// "I am here" every few seconds (with the token, in its Authorization header); each beat keeps
// (or opens) one token-carrying stream for that seat for `hold` more, and the stream is closed
// when beats stop, when the page says it left, or when the match ends.
//
// Soft state only: after a gateway restart the page's next beat, on any instance, opens it again.
#ifndef PLY_CLIENT_WEB_PRESENCE_HOLD_H_
#define PLY_CLIENT_WEB_PRESENCE_HOLD_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client-cli/lobby_link.h"

namespace ply::web {

class PresenceHolds {
 public:
  // At most `max_holds` seats held at once (each is a stream to the lobby and a thread here).
  PresenceHolds(client::LobbyClient* lobby, absl::Duration hold, size_t max_holds);
  ~PresenceHolds();
  PresenceHolds(const PresenceHolds&) = delete;
  PresenceHolds& operator=(const PresenceHolds&) = delete;

  // The player of `token` in `match_id` is here. A new hold waits up to `wait` for the lobby to
  // take the stream, so that a token the lobby refuses (not of this match, finished, made up)
  // gets the lobby's error here and holds nothing.
  absl::Status Beat(int64_t match_id, const std::string& token, absl::Duration wait);
  // The player left (closed the page): the hold ends now. Unknown holds are ignored.
  void Leave(int64_t match_id, const std::string& token);
  absl::Duration hold() const { return hold_; }
  size_t size();

 private:
  struct Hold {
    std::unique_ptr<client::MatchStream> stream;
    absl::Time until;
  };
  using Key = std::pair<int64_t, std::string>;
  // Drops expired and ended holds (and the events their streams brought, which nobody reads).
  void Sweep();

  client::LobbyClient* lobby_;
  const absl::Duration hold_;
  const size_t max_holds_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::map<Key, std::shared_ptr<Hold>> holds_;
  std::thread sweeper_;
};

}  // namespace ply::web

#endif  // PLY_CLIENT_WEB_PRESENCE_HOLD_H_
