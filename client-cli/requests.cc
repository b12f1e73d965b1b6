#include "client-cli/requests.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/core/display_text.h"
#include "engine/core/options.h"

namespace ply::client {
namespace {

absl::Status AddSeats(const NewFlags& flags, NewMatch& m) {
  std::vector<std::string> seats = {absl::AsciiStrToLower(flags.seat1),
                                    absl::AsciiStrToLower(flags.seat2)};
  if (seats[0] != "me" && seats[1] != "me") {
    for (std::string& s : seats) {
      if (s.empty()) {
        s = "me";
        break;
      }
    }
  }
  for (int i = 0; i < 2; ++i) {
    std::string& s = seats[i];
    if (s.empty()) s = "open";
    v1::SeatSpec* spec = m.request.add_seats();
    if (s == "me" || s == "open") {
      spec->set_kind(v1::SEAT_KIND_HUMAN);
      if (s == "me") {
        if (m.mine >= 0) {
          return absl::InvalidArgumentError(
              "only one seat can be `me`; let a friend `ply join` the other");
        }
        m.mine = i;
      }
    } else if (s.rfind("bot", 0) == 0) {
      spec->set_kind(v1::SEAT_KIND_BOT);
      const size_t colon = s.find(':');
      spec->set_difficulty(colon == std::string::npos ? "medium" : s.substr(colon + 1));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--seat", i + 1, " is '", s, "': use me, open or bot:LEVEL"));
    }
  }
  if (m.mine >= 0) {
    m.request.set_take_seat(m.mine);
    m.request.set_display_name(flags.name);
  }
  return absl::OkStatus();
}

absl::Status AddClock(const std::string& clock, v1::CreateMatchRequest& request) {
  if (clock.empty()) return absl::OkStatus();
  std::vector<std::string> parts = absl::StrSplit(clock, '+');
  double minutes = 0, increment = 0;
  if (parts.size() > 2 || !absl::SimpleAtod(parts[0], &minutes) ||
      (parts.size() == 2 && !absl::SimpleAtod(parts[1], &increment)) || minutes <= 0 ||
      increment < 0) {
    return absl::InvalidArgumentError("--clock is MINUTES[+SECONDS], e.g. 5+3");
  }
  request.mutable_time_control()->set_initial_ms(static_cast<int64_t>(minutes * 60000));
  request.mutable_time_control()->set_increment_ms(static_cast<int64_t>(increment * 1000));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NewMatch> NewMatchRequest(const NewFlags& flags) {
  if (flags.args.empty()) {
    return absl::InvalidArgumentError(
        "new needs a game, e.g. `ply new connect4 --seat2 bot:medium`");
  }
  NewMatch m;
  m.request.mutable_spec()->set_name(flags.args[0]);
  std::vector<std::string> option_texts = {flags.opt};
  option_texts.insert(option_texts.end(), flags.args.begin() + 1, flags.args.end());
  for (const std::string& text : option_texts) {
    if (text.empty()) continue;
    absl::StatusOr<GameOptions> parsed = ParseOptions(text);
    if (!parsed.ok()) return parsed.status();
    for (const auto& [k, v] : *parsed) (*m.request.mutable_spec()->mutable_options())[k] = v;
  }
  if (absl::Status s = AddSeats(flags, m); !s.ok()) return s;
  if (absl::Status s = AddClock(flags.clock, m.request); !s.ok()) return s;
  if (flags.pacing_ms >= 0) m.request.set_bot_pacing_ms(flags.pacing_ms);
  return m;
}

absl::StatusOr<int> ParseSeatFlag(const std::string& text) {
  if (text.empty()) return -1;
  int seat = 0;
  if (!absl::SimpleAtoi(text, &seat) || seat < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--seat ", text, ": seats are counted from 1 (--seat 1 or --seat 2)"));
  }
  return seat - 1;
}

absl::Status CheckSeat(const v1::Match& match, int seat) {
  const int n = match.seats_size();
  if (seat < 0 || seat >= n) {
    return absl::InvalidArgumentError(
        absl::StrCat("match ", match.id(), " has seats 1 to ", n, "; there is no seat ", seat + 1));
  }
  const v1::Seat& s = match.seats(seat);
  if (s.kind() == v1::SEAT_KIND_BOT) {
    return absl::InvalidArgumentError(
        absl::StrCat("seat ", seat + 1, " (", s.side(), ") of match ", match.id(), " is a bot's"));
  }
  if (s.taken()) {
    return absl::AlreadyExistsError(absl::StrCat("seat ", seat + 1, " (", s.side(), ") of match ",
                                                 match.id(), " is already taken by ",
                                                 DisplayText(s.display_name())));
  }
  return absl::OkStatus();
}

}  // namespace ply::client
