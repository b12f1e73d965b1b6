#include "client-cli/session.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client-cli/analysis_view.h"
#include "client-cli/screen.h"
#include "client-cli/terminal.h"
#include "common/proto_convert.h"
#include "engine/core/display_text.h"
#include "engine/registry/registry.h"

namespace ply::client {
namespace {

// Notices kept on screen at most (connection news, answers to commands).
constexpr size_t kMaxNotices = 12;
constexpr int kWrap = 76;

// `items` joined by spaces, wrapped to lines of about kWrap columns.
std::vector<std::string> Wrap(const std::string& lead, const std::vector<std::string>& items) {
  std::vector<std::string> lines = {lead};
  for (const std::string& item : items) {
    if (lines.back().size() + item.size() + 1 > kWrap) lines.push_back("   ");
    absl::StrAppend(&lines.back(), " ", item);
  }
  return lines;
}

// Legal moves listed at most by `moves`; past that (Gomoku's open board) a count and the notation.
constexpr size_t kMaxListedMoves = 60;

class Session {
 public:
  Session(LobbyClient& lobby, const SessionOptions& options)
      : lobby_(lobby),
        o_(options),
        // A player's stream carries the seat's token (it tells the opponent that we are here)
        // and stays after the end for the rematch.
        stream_(&lobby, options.match_id, options.seat ? options.seat->token : "",
                /*follow_rematch=*/options.seat.has_value()) {}

  // The seat in the rematch both players agreed to on the final screen, if they did.
  const std::optional<SeatTicket>& next() const { return next_; }

  int Run() {
    RawTerminal raw;
    ResizeWatch resize;
    if (o_.tty) WriteOut("\x1b[2J\x1b[H");
    bool stdin_open = true;
    for (;;) {
      pollfd fds[3] = {{.fd = stream_.wake_fd(), .events = POLLIN, .revents = 0},
                       {.fd = resize.wake_fd(), .events = POLLIN, .revents = 0},
                       {.fd = STDIN_FILENO, .events = POLLIN, .revents = 0}};
      const int n = poll(fds, stdin_open && InputWanted() ? 3 : 2, TickMs());
      if (n < 0 && errno != EINTR) return Fail("poll failed");
      if (n > 0 && (fds[0].revents & POLLIN)) TakeEvents();
      if (resize.Take()) Resized();
      if (stdin_open && n > 0 && (fds[2].revents & (POLLIN | POLLHUP))) {
        char buf[256];
        // A script's input a byte at a time, so that a line is read only when it can be played.
        const ssize_t got = read(STDIN_FILENO, buf, *input_is_script_ ? 1 : sizeof(buf));
        if (got <= 0) {
          stdin_open = false;
          // A script that ran out of moves leaves its seat the way `quit` does.
          if (playing()) leaving_ = true;
        } else {
          Keys(std::string_view(buf, static_cast<size_t>(got)));
        }
      }
      ++spinner_;
      if (failed_) return Fail(error_);
      if (view_.over() || leaving_ || stream_ended_) break;
      Draw(/*final=*/false);
    }
    if (!leaving_ && view_.over() && o_.tty && stdin_open && StdinIsTty()) {
      FinalScreen(resize);
    }
    Draw(/*final=*/true);
    if (leaving_ && !view_.over() && playing()) {
      std::cout << "You left match " << o_.match_id << "; `ply join " << o_.match_id
                << "` takes your seat again." << std::endl;
      // What staying away costs: a player who quit a bot game learned it from a lost rating.
      const v1::Match& m = view_.match();
      const int other = 1 - my_seat();
      if (m.has_time_control()) {
        std::cout << "Your clock keeps running while you are away." << std::endl;
      } else if (other >= 0 && other < m.seats_size() &&
                 m.seats(other).kind() == v1::SEAT_KIND_BOT) {
        std::cout << "Stay away on your move past the lobby's bound (5 min unless it says "
                     "otherwise) and the game ends: a loss if it is rated."
                  << std::endl;
      } else {
        std::cout << "Stay away on your move past the lobby's bound (2 min unless it says "
                     "otherwise) and your opponent may claim the game."
                  << std::endl;
      }
    }
    return 0;
  }

 private:
  // Whether to read the input now. A person types when they like (a move out of turn is
  // answered and dropped); a script's next line is read when it can be played: once the match
  // is loaded, and for a player on their own move (or after the end). Lines piped in before the
  // first board were all dropped, and the script's end read as leaving.
  bool InputWanted() {
    if (!input_is_script_) input_is_script_ = !StdinIsTty();
    if (!*input_is_script_) return true;
    if (!view_.loaded()) return false;
    if (!playing() || view_.over()) return true;
    return view_.active() && view_.match().to_move() == my_seat();
  }
  std::optional<bool> input_is_script_;

  // A note on screen. Connection news lasts until the next word on the connection; every other
  // note belongs to the state of the match it was written in and goes when that changes.
  struct Note {
    std::string text;
    bool lasting = false;
    int id = 0;  // counts up, so that a printed log knows which notes are new
  };

  bool playing() const { return o_.seat.has_value(); }
  int my_seat() const { return playing() ? o_.seat->seat : -1; }

  // Redraws often enough for the spinner and running clocks.
  int TickMs() const {
    if (!o_.tty) return 1000;
    if (view_.BotToMove()) return 100;
    if (view_.active() && view_.match().has_time_control()) return 200;
    return 1000;
  }

  int Fail(const std::string& message) {
    if (o_.tty) WriteOut("\n");
    std::cerr << "ply: " << message << std::endl;
    return 1;
  }

  // What the notes are tied to: the moves, the status, the open draw offer.
  std::tuple<int, int, int> State() const {
    if (!view_.loaded()) return {-1, -1, -1};
    return {view_.plies(), static_cast<int>(view_.match().status()), view_.match().draw_offer()};
  }

  // Drops the notes of a state that has passed.
  void ForgetStale() {
    const auto state = State();
    if (state == notes_state_) return;
    notes_state_ = state;
    const size_t before = notes_.size();
    std::erase_if(notes_, [](const Note& n) { return !n.lasting; });
    if (notes_.size() != before) ++notice_version_;
    confirming_resign_ = false;
  }

  void Notice(std::string text, bool lasting = false) {
    ForgetStale();
    // Each retry (and the reconnection) replaces the previous word on the connection.
    if (lasting) std::erase_if(notes_, [](const Note& n) { return n.lasting; });
    notes_.push_back({std::move(text), lasting, ++note_ids_});
    if (notes_.size() > kMaxNotices) notes_.erase(notes_.begin());
    ++notice_version_;
  }
  // The answer to a command replaces the previous one.
  void Answer(std::vector<std::string> lines) {
    ForgetStale();
    std::erase_if(notes_, [](const Note& n) { return !n.lasting; });
    for (std::string& l : lines) notes_.push_back({std::move(l), false, ++note_ids_});
    ++notice_version_;
  }

  void TakeEvents() {
    const int mover_before = view_.loaded() && view_.active() ? view_.match().to_move() : -1;
    for (MatchStream::Item& item : stream_.Take()) {
      if (!item.notice.empty()) Notice(item.notice, /*lasting=*/true);
      if (item.ended) {
        if (!item.error.ok()) {
          failed_ = true;
          error_ = Describe(item.error, lobby_.address());
        }
        stream_ended_ = true;
      }
      if (!item.event) continue;
      if (absl::Status s = view_.Apply(*item.event, absl::Now()); !s.ok()) Reload();
      ForgetStale();
      if (item.event->has_presence() && item.event->presence().present() &&
          item.event->presence().seat() != my_seat() && view_.loaded()) {
        Notice(absl::StrCat(view_.Player(item.event->presence().seat()), " is back."));
      }
      if (item.event->has_bot_trouble()) {
        const v1::BotTrouble& t = item.event->bot_trouble();
        Notice(absl::StrCat(view_.loaded() ? view_.Side(t.seat()) : "A", " bot has no move yet (",
                            t.attempts(), t.attempts() == 1 ? " try" : " tries",
                            "; the lobby keeps trying): ", DisplayText(t.message())));
      }
    }
    TurnChanged(mover_before);
  }

  // Rings the bell when the turn comes back to us after a long wait for the opponent.
  void TurnChanged(int mover_before) {
    if (!playing() || !view_.loaded() || !view_.active()) return;
    const int mover = view_.match().to_move();
    if (mover == mover_before) return;
    if (mover != my_seat()) {
      their_turn_since_ = absl::Now();
      return;
    }
    if (o_.tty && o_.bell_after > absl::ZeroDuration() && mover_before >= 0 &&
        their_turn_since_ != absl::InfinitePast() &&
        absl::Now() - their_turn_since_ >= o_.bell_after) {
      WriteOut("\a");
    }
  }

  // Our picture of the match disagrees with an event: start again from the lobby's.
  void Reload() {
    absl::StatusOr<v1::Match> m = lobby_.GetMatch(o_.match_id);
    if (m.ok()) (void)view_.Reset(*m, absl::Now());
  }

  // The old frame is garbled at the new size: clear and draw it whole.
  void Resized() {
    if (!o_.tty) return;
    WriteOut("\x1b[2J");
    last_frame_.clear();
  }

  void Keys(std::string_view bytes) {
    if (!playing()) {
      // Watching: q (or Ctrl-C, Ctrl-D) leaves.
      for (char c : bytes) {
        if (c == 'q' || c == 'Q' || c == 0x03 || c == 0x04) leaving_ = true;
      }
      return;
    }
    for (const LineEditor::Result& r : editor_.Feed(bytes)) {
      if (r.event == LineEditor::Event::kQuit) {
        leaving_ = true;
        return;
      }
      Command(std::string(absl::StripAsciiWhitespace(r.line)));
      if (leaving_ || view_.over()) return;
    }
  }

  // The match has ended and a person is looking: the final screen stays until they leave, or
  // until both players agree to a rematch (`r`), which the session then goes on into.
  void FinalScreen(ResizeWatch& resize) {
    if (o_.offer_rematch && playing()) Rematch();
    for (;;) {
      if (next_) return;
      Draw(/*final=*/false);
      pollfd fds[3] = {{.fd = STDIN_FILENO, .events = POLLIN, .revents = 0},
                       {.fd = resize.wake_fd(), .events = POLLIN, .revents = 0},
                       {.fd = stream_.wake_fd(), .events = POLLIN, .revents = 0}};
      if (poll(fds, 3, 1000) < 0 && errno != EINTR) return;
      if (fds[2].revents & POLLIN) {
        TakeEvents();
        RematchNews();
        continue;
      }
      if (resize.Take()) Resized();
      if (!(fds[0].revents & (POLLIN | POLLHUP))) continue;
      char buf[64];
      const ssize_t got = read(STDIN_FILENO, buf, sizeof(buf));
      if (got <= 0) return LeaveFinalScreen();
      for (char c : std::string_view(buf, static_cast<size_t>(got))) {
        if (c == 'q' || c == 'Q' || c == 0x03 || c == 0x04) return LeaveFinalScreen();
        if (!playing()) continue;
        if (c == 'r' || c == 'R') Rematch();
        if ((c == 'n' || c == 'N') && TheirRematchOffer()) {
          AnswerRematch(/*decline=*/true);
          rematch_note_ = "You declined the rematch.";
        }
        if (next_) return;
      }
    }
  }

  bool MyRematchOffer() const {
    return playing() && view_.loaded() && view_.match().rematch_offer() == my_seat();
  }
  bool TheirRematchOffer() const {
    return playing() && view_.loaded() && view_.match().rematch_offer() >= 0 &&
           view_.match().rematch_offer() != my_seat();
  }
  std::string Opponent() const {
    const int them = 1 - my_seat();
    if (!view_.loaded() || them < 0 || them >= view_.match().seats_size()) return "your opponent";
    return DisplayText(view_.match().seats(them).display_name());
  }

  // Offers a rematch, or accepts the opponent's.
  void Rematch() {
    if (MyRematchOffer()) return;
    AnswerRematch(/*decline=*/false);
    if (!next_ && MyRematchOffer()) rematch_note_.clear();
  }

  // Leaving the final screen takes back an offer nobody answered.
  void LeaveFinalScreen() {
    if (MyRematchOffer()) AnswerRematch(/*decline=*/true);
  }

  // The lobby's answer to an offer (or a refusal) becomes the screen's; a rematch made is the
  // next match.
  void AnswerRematch(bool decline) {
    absl::StatusOr<v1::OfferRematchResponse> r =
        lobby_.OfferRematch(o_.match_id, o_.seat->token, decline);
    if (!r.ok()) {
      rematch_note_ = "No rematch: " + Describe(r.status(), lobby_.address());
      return;
    }
    (void)view_.Reset(r->match(), absl::Now());
    rematch_offer_ = r->match().rematch_offer();
    if (r->rematch_id() > 0) {
      next_ = SeatTicket{.match_id = r->rematch_id(),
                         .seat = r->seat(),
                         .token = r->seat_token(),
                         .name = o_.seat->name};
    }
  }

  // What the opponent did about the rematch, as the stream told it.
  void RematchNews() {
    if (!playing() || !view_.loaded()) return;
    const int offer = view_.match().rematch_offer();
    if (view_.match().rematch_id() > 0) {
      // Agreed: our seat in it is ours for asking with this match's token.
      AnswerRematch(/*decline=*/false);
      return;
    }
    if (offer == rematch_offer_) return;
    if (offer < 0 && rematch_offer_ == my_seat()) {
      rematch_note_ = absl::StrCat(Opponent(), " declined the rematch.");
    } else if (offer < 0) {
      rematch_note_ = absl::StrCat(Opponent(), " withdrew the rematch offer.");
    } else {
      rematch_note_.clear();
    }
    rematch_offer_ = offer;
  }

  void Command(const std::string& line) {
    if (line.empty()) return;
    const std::string word = absl::AsciiStrToLower(line);
    if (confirming_resign_) {
      confirming_resign_ = false;
      if (word == "yes" || word == "y") return Resign();
      Answer({"You did not resign; the game goes on."});
      if (word == "no" || word == "n") return;
    }
    if (word == "quit" || word == "exit" || word == "q") {
      leaving_ = true;
    } else if (word == "help" || word == "?") {
      std::vector<std::string> help = {
          absl::StrCat("Moves: ", view_.loaded() ? view_.game().Info().notation_hint : ""),
          "Commands: moves (the legal moves), resign (asks first), draw (offer or accept), claim "
          "or claim draw (when the opponent has left), quit (leave; `ply join` resumes)"};
      Answer(help);
    } else if (word == "moves") {
      Moves();
    } else if (word == "resign") {
      if (!view_.loaded() || !view_.active()) {
        return Answer({"Nothing to resign: the match is not under way."});
      }
      Answer({"Resign this game? Type 'yes' to resign; anything else plays on."});
      confirming_resign_ = true;
    } else if (word == "claim" || word == "claim win" || word == "claim draw") {
      absl::StatusOr<v1::Match> m =
          lobby_.ClaimVictory(o_.match_id, word == "claim draw", o_.seat->token);
      if (!m.ok()) return Answer({"No claim: " + Describe(m.status(), lobby_.address())});
      Answer({});
      Adopt(*m);
    } else if (word == "draw") {
      absl::StatusOr<v1::Match> m = lobby_.OfferDraw(o_.match_id, o_.seat->token);
      if (!m.ok()) return Answer({"No draw: " + Describe(m.status(), lobby_.address())});
      // The screen says that the offer stands, for as long as it does.
      Answer({});
      Adopt(*m);
    } else {
      Move(line);
    }
  }

  void Moves() {
    if (!view_.loaded() || !view_.active()) {
      return Answer({"No moves to make: the match is not under way."});
    }
    const std::string lead =
        view_.match().to_move() == my_seat() ? "Legal moves:" : "Legal moves (for your opponent):";
    const std::vector<std::string> moves = view_.game().LegalMoves();
    if (moves.size() > kMaxListedMoves) {
      return Answer({absl::StrCat(lead, " ", moves.size(), ", too many to list."),
                     absl::StrCat("A move is ", view_.game().Info().notation_hint)});
    }
    Answer(Wrap(lead, SortedMoves(moves)));
  }

  void Resign() {
    absl::StatusOr<v1::Match> m = lobby_.Resign(o_.match_id, o_.seat->token);
    if (!m.ok()) return Answer({"Cannot resign: " + Describe(m.status(), lobby_.address())});
    Answer({});
    Adopt(*m);
  }

  void Move(const std::string& move) {
    if (!view_.loaded()) return Answer({"Still connecting to the lobby; try again in a moment."});
    const char* cross = o_.look == Look::kPlain ? "x " : "✗ ";
    if (view_.match().status() == v1::MATCH_STATUS_WAITING) {
      return Answer({"The match has not started: waiting for an opponent to join."});
    }
    if (view_.active() && view_.match().to_move() != my_seat()) {
      const int mover = view_.match().to_move();
      return Answer({absl::StrCat(cross, "'", move, "' was not played: it is not your turn; ",
                                  view_.SideAndPlayer(mover), " is to move.")});
    }
    v1::MakeMoveRequest request;
    request.set_match_id(o_.match_id);
    request.set_expected_ply(view_.plies());
    request.set_move(move);
    absl::StatusOr<v1::MakeMoveResponse> r = lobby_.MakeMove(request, o_.seat->token);
    if (!r.ok()) {
      return Answer({absl::StrCat(cross, "'", move,
                                  "' was not played: ", Describe(r.status(), lobby_.address())),
                     "Type 'moves' for the legal moves, 'help' for the notation."});
    }
    Answer({});
    const int mover_before = view_.match().to_move();
    Adopt(r->match());
    TurnChanged(mover_before);
  }

  // A reply's match, unless the stream has already brought us further.
  void Adopt(const v1::Match& m) {
    if (m.moves_size() < view_.plies()) return;
    if (m.moves_size() == view_.plies() && view_.over()) return;
    (void)view_.Reset(m, absl::Now());
    ForgetStale();
  }

  void Draw(bool final) {
    ForgetStale();
    ScreenOptions s;
    s.look = o_.look;
    s.my_seat = my_seat();
    s.move_log = true;
    for (const Note& n : notes_) s.notices.push_back(n.text);
    s.spinner = o_.tty ? spinner_ : -1;
    s.now = absl::Now();
    s.rows = o_.tty ? TerminalRows() : 0;
    s.cols = o_.tty ? TerminalCols() : 0;
    if (!final && view_.over() && playing()) {
      if (TheirRematchOffer()) {
        s.notices.push_back(absl::StrCat(Opponent(), " offers a rematch: r to accept"));
      } else if (MyRematchOffer()) {
        s.notices.push_back(absl::StrCat("You offered a rematch; waiting for ", Opponent(), "."));
      } else if (!rematch_note_.empty()) {
        s.notices.push_back(rematch_note_);
      }
    }
    if (!final) {
      if (view_.over() && playing() && o_.tty) {
        // Plain output stays ASCII.
        const std::string dot = o_.look == Look::kPlain ? ", " : " · ";
        s.prompt = Dim(TheirRematchOffer() ? absl::StrCat("r: accept the rematch", dot,
                                                          "n: decline", dot, "q: quit")
                       : MyRematchOffer()  ? std::string("q: quit (takes your rematch offer back)")
                                           : absl::StrCat("r: rematch", dot, "q: quit"),
                       o_.look);
      } else if (view_.over()) {
        s.prompt = Dim("q: quit", o_.look);
      } else if (playing()) {
        s.prompt = absl::StrCat(o_.look == Look::kPlain ? "move> " : "move› ", editor_.pending());
      } else if (o_.tty) {
        s.prompt = Dim("q: stop watching", o_.look);
      }
    }
    if (o_.tty) {
      std::string frame = Frame(ComposeScreen(view_, s));
      if (final) frame += "\n";
      if (frame != last_frame_) WriteOut(frame);
      last_frame_ = std::move(frame);
      return;
    }
    DrawLines(s, final);
  }

  // Not a terminal: print what changed as new lines.
  void DrawLines(const ScreenOptions& s, bool final) {
    if (!view_.loaded()) return;
    if (!playing()) {
      // A watcher's log: the first screen, one line per move, the last screen.
      const v1::Match& m = view_.match();
      if (printed_plies_ < 0 || final) {
        ScreenOptions first = s;
        first.move_log = false;
        first.notices.clear();
        WriteOut(absl::StrCat(absl::StrJoin(ComposeScreen(view_, first), "\n"), "\n"));
        printed_plies_ = view_.plies();
        return;
      }
      for (; printed_plies_ < view_.plies(); ++printed_plies_) {
        const v1::MoveRecord& mv = m.moves(printed_plies_);
        const std::string bot = BotSummary(mv, m);
        if (!bot.empty() && !printed_legend_ && !ScoreLegend(m).empty()) {
          WriteOut(ScoreLegend(m) + "\n");
          printed_legend_ = true;
        }
        WriteOut(absl::StrCat(mv.ply(), ". ", view_.Side(mv.seat()), " ", mv.move(),
                              bot.empty() ? "" : "  (" + bot + ")", "\n"));
      }
      for (const Note& n : notes_) {
        if (n.id > printed_notes_) WriteOut(n.text + "\n");
      }
      printed_notes_ = note_ids_;
      return;
    }
    const auto key = std::make_tuple(view_.plies(), static_cast<int>(view_.match().status()),
                                     notice_version_, view_.match().draw_offer());
    if (key == last_key_ && !final) return;
    last_key_ = key;
    std::vector<std::string> lines = ComposeScreen(view_, s);
    WriteOut(absl::StrCat(absl::StrJoin(lines, "\n"), s.prompt.empty() ? "\n" : "", "\n"));
  }

  LobbyClient& lobby_;
  const SessionOptions o_;
  MatchStream stream_;
  MatchModel view_;
  LineEditor editor_;
  std::vector<Note> notes_;
  std::tuple<int, int, int> notes_state_{-1, -1, -1};
  int notice_version_ = 0;
  int note_ids_ = 0;
  int printed_notes_ = 0;
  int printed_plies_ = -1;
  std::tuple<int, int, int, int> last_key_{-1, -1, -1, -1};
  std::string last_frame_;
  int spinner_ = 0;
  bool leaving_ = false;
  bool stream_ended_ = false;
  bool failed_ = false;
  bool confirming_resign_ = false;
  bool printed_legend_ = false;
  absl::Time their_turn_since_ = absl::InfinitePast();
  std::string error_;
  // The rematch offer as last seen (-1: none), what became of one, and the rematch's seat.
  int rematch_offer_ = -1;
  std::string rematch_note_;
  std::optional<SeatTicket> next_;
};

std::vector<std::string> ReplayScreen(const v1::Match& match, int ply, Look look,
                                      const v1::MatchAnalysis* analysis) {
  std::vector<std::string> moves;
  for (int i = 0; i < ply; ++i) moves.push_back(match.moves(i).move());
  std::vector<std::string> lines;
  absl::StatusOr<std::unique_ptr<AnyGame>> game =
      ReplayGame(match.spec().name(), FromProto(match.spec()), moves);
  if (!game.ok()) return {std::string(game.status().message())};
  lines.push_back(
      Bold(absl::StrCat("ply replay · ", (*game)->Info().title, " · match ", match.id()), look));
  for (int i = 0; i < match.seats_size(); ++i) {
    const v1::Seat& s = match.seats(i);
    lines.push_back(absl::StrCat("  ", SideGlyph(match.spec().name(), i, look), " ", s.side(), "  ",
                                 s.taken() ? DisplayText(s.display_name()) : "(open)"));
  }
  lines.push_back("");
  const BoardOptions board = {.over = ply == match.moves_size() &&
                                      match.status() == v1::MATCH_STATUS_FINISHED};
  for (absl::string_view l : absl::StrSplit(RenderBoard(**game, look, board), '\n')) {
    if (!l.empty()) lines.emplace_back(l);
  }
  lines.push_back("");
  if (ply == 0) {
    lines.push_back(absl::StrCat("Start position (", match.moves_size(), " moves follow)"));
  } else {
    const v1::MoveRecord& mv = match.moves(ply - 1);
    const std::string bot = BotSummary(mv, match);
    lines.push_back(absl::StrCat("Move ", ply, " of ", match.moves_size(), ": ",
                                 match.seats(mv.seat()).side(), " ", Bold(mv.move(), look),
                                 bot.empty() ? "" : "  (" + bot + ")"));
    if (!bot.empty()) lines.push_back(Dim(ScoreLegend(match), look));
    if (analysis != nullptr && ply - 1 < analysis->moves_size()) {
      lines.push_back(MoveAnalysisLine(analysis->moves(ply - 1), look));
    }
  }
  if (ply == match.moves_size() && match.status() == v1::MATCH_STATUS_FINISHED) {
    lines.push_back(GameOverLines(match, -1).front());
  }
  return lines;
}

}  // namespace

int RunSession(LobbyClient& lobby, const SessionOptions& options) {
  SessionOptions o = options;
  for (;;) {
    std::optional<SeatTicket> next;
    int code = 0;
    {
      Session session(lobby, o);
      code = session.Run();
      next = session.next();
    }
    if (!next) return code;
    if (o.store != nullptr) {
      if (absl::Status s = o.store->Save(lobby.address(), *next); !s.ok()) {
        std::cerr << "ply: warning: " << s.message() << " (`ply join " << next->match_id
                  << "` will not find your seat)" << std::endl;
      }
    }
    o.match_id = next->match_id;
    o.seat = next;
    o.offer_rematch = false;
  }
}

int RunReplay(const v1::Match& match, Look look, bool tty, const v1::MatchAnalysis* analysis) {
  const int last = match.moves_size();
  if (!tty || !StdinIsTty()) {
    for (int ply = 0; ply <= last; ++ply) {
      WriteOut(absl::StrCat(absl::StrJoin(ReplayScreen(match, ply, look, analysis), "\n"), "\n\n"));
    }
    return 0;
  }
  RawTerminal raw;
  WriteOut("\x1b[2J");
  int ply = 0;
  for (;;) {
    std::vector<std::string> lines = ReplayScreen(match, ply, look, analysis);
    lines.push_back("");
    lines.push_back(Dim("n/space/→ next · p/← back · g start · G end · q quit", look));
    WriteOut(Frame(lines));
    char buf[16];
    const ssize_t got = read(STDIN_FILENO, buf, sizeof(buf));
    if (got <= 0) break;
    const std::string keys(buf, static_cast<size_t>(got));
    if (keys == "\x1b[C" || keys == "n" || keys == " " || keys == "\r") {
      ply = std::min(last, ply + 1);
    } else if (keys == "\x1b[D" || keys == "p" || keys == "\x7f") {
      ply = std::max(0, ply - 1);
    } else if (keys == "g" || keys == "\x1b[H") {
      ply = 0;
    } else if (keys == "G" || keys == "\x1b[F") {
      ply = last;
    } else if (keys == "q" || keys == "\x03" || keys == "\x04" || keys == "\x1b") {
      break;
    }
  }
  WriteOut("\n");
  return 0;
}

}  // namespace ply::client
