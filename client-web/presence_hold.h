// A web player's presence in the lobby. The lobby counts a seat as present while a WatchMatch
// stream carrying the seat's token is open; the page's own event stream is shared by everyone
// watching the match through this gateway (watch_hub.h) and carries no token, so without this a
// player looking at the page would count as gone and could be claimed against. The page says
// "I am here" every few seconds (with the token, in its Authorization header); each beat keeps
// (or opens) one token-carrying stream for that seat for `hold` more, and the stream is closed
// when beats stop, when the page says it left, or when the match ends.
//
// A page's first beat opens the stream and waits a little (kFirstAnswerWait) for the lobby's
// first answer: a refusal (a foreign or made-up token, a missing match) that comes in that time
// is the answer to that same request, since the page's next beat may land on another gateway
// instance, which would know nothing of it. Past that wait (a slow lobby) the beat says "not held
// yet", and the lobby's answer is told on a later beat to this instance. Later beats never wait:
// they answer from what the hold knows, so that a slow or unreachable lobby cannot tie up the
// HTTP workers for longer than the first beat's short wait.
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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lobby-client/lobby_link.h"

namespace ply::web {

class PresenceHolds {
 public:
  // How long a first beat waits for the lobby to take or refuse the new stream, holding an HTTP
  // worker. A lobby nearby answers in milliseconds. Against a silent lobby, 32 first beats at
  // once on cpp-httplib's 8 workers would take about 4 x this; web_gateway_test's 32 (30 ms
  // apart) must each answer within 2 s.
  static constexpr absl::Duration kFirstAnswerWait = absl::Milliseconds(250);
  // How long a beat waits for the lobby's answer when it reaches the lobby as a call (Here).
  static constexpr absl::Duration kSignOfLifeWait = absl::Seconds(1);

  // At most `max_holds` seats held at once (each is a stream to the lobby and a thread here),
  // and as many refusals kept for their pages.
  PresenceHolds(client::LobbyClient* lobby, absl::Duration hold, size_t max_holds);
  ~PresenceHolds();
  PresenceHolds(const PresenceHolds&) = delete;
  PresenceHolds& operator=(const PresenceHolds&) = delete;

  // The player of `token` in `match_id` is here: whether the seat's stream is, as last heard,
  // read by the lobby (so the seat counts as present). True from the stream's first event
  // until its connection is lost; false before the lobby has answered, while the stream is
  // retrying a lost connection (until the first event after it is back), and after the match
  // ended. A first beat waits up to kFirstAnswerWait, later beats return at once. A token the
  // lobby refused (not of this match, finished, made up) gets the lobby's error, on the first
  // beat when the refusal came within its wait, else on the next beat to this instance within
  // the hold; it holds nothing.
  absl::StatusOr<bool> Beat(int64_t match_id, const std::string& token);
  // When no stream can be held for the seat (this gateway holds max_holds, or the lobby refuses
  // it more streams), the beat is a Here call to the lobby instead, waiting up to
  // kSignOfLifeWait: a seat holder's beat is never refused because of other pages' load.
  // The player left (closed the page): the hold ends now. Unknown holds are ignored.
  void Leave(int64_t match_id, const std::string& token);
  absl::Duration hold() const { return hold_; }
  // The streams open now.
  size_t size();

 private:
  struct Hold {
    std::unique_ptr<client::MatchStream> stream;  // null once the lobby refused or ended it
    absl::Time until;
    bool taken = false;    // the lobby is reading the stream: the seat counts as present
    bool ended = false;    // the match is over: nothing to hold
    absl::Status refused;  // the lobby's error, kept for the page's next beat
  };
  using Key = std::pair<int64_t, std::string>;
  // Beat's stream part: RESOURCE_EXHAUSTED when no stream can be held for the seat.
  absl::StatusOr<bool> HoldStream(int64_t match_id, const std::string& token);
  // The beat as a Here call to the lobby: whether the match is still on, or the lobby's error.
  absl::StatusOr<bool> SignOfLife(int64_t match_id, const std::string& token);
  // What `hold`'s stream has brought since last looked at (the events themselves nobody reads);
  // a stream that is over is handed to `closed`, to be closed outside the lock.
  static void Update(Hold& hold, std::vector<std::unique_ptr<client::MatchStream>>& closed);
  size_t OpenLocked() const;
  // A beat of a hold already open: its state, and its lapse pushed back.
  absl::StatusOr<bool> BeatLocked(std::map<Key, Hold>::iterator it,
                                  std::vector<std::unique_ptr<client::MatchStream>>& closed);
  // Notes the lobby's answers and drops expired and ended holds.
  void Sweep();

  client::LobbyClient* lobby_;
  const absl::Duration hold_;
  const size_t max_holds_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  size_t opening_ = 0;  // first beats opening a stream now, counted against max_holds_
  std::map<Key, Hold> holds_;
  std::thread sweeper_;
};

}  // namespace ply::web

#endif  // PLY_CLIENT_WEB_PRESENCE_HOLD_H_
