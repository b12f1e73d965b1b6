#include "lobby-server/names.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/core/display_text.h"

namespace ply::lobby {
namespace {

enum class Kind {
  kVisible,
  // Spaces and characters that show as nothing: trimmed at the ends, never enough on their own.
  kBlank,
  // Zero-width (non-)joiners: needed inside some scripts and emoji, invisible alone.
  kJoiner,
  kMark,
  kControl,
  kBidi,
  kInvisibleFormat,
  kUnprintable,
};

struct Range {
  char32_t first, last;
};

bool InAny(char32_t c, std::initializer_list<Range> ranges) {
  for (const Range& r : ranges) {
    if (c >= r.first && c <= r.last) return true;
  }
  return false;
}

// Without ICU there is no full Unicode table here: these are the characters that matter for
// what a name can do to a screen. Marks cover the blocks that "Zalgo" stacks are made of and the
// scripts whose vowel points stack (Hebrew, Arabic, Thai); a mark outside them counts as a
// character of its own, which the length bounds still limit.
Kind Classify(char32_t c) {
  if (IsControlCharacter(c)) return Kind::kControl;
  if (c < 0x7f) return c == ' ' ? Kind::kBlank : Kind::kVisible;
  if (IsBidiFormatting(c)) return Kind::kBidi;
  // Unicode's Default_Ignorable_Code_Point (what renders as nothing) outside the kinds below,
  // and the interlinear annotation controls: the Khmer inherent vowels U+17B4/U+17B5 made a
  // guest's "ali\u17b4ce" read as "alice" in every list, past the look-alike check.
  if (c == 0x00ad || c == 0x034f || c == 0x180e || c == 0x180f || c == 0x200b || c == 0xfeff ||
      InAny(c, {{0x17b4, 0x17b5},
                {0x180b, 0x180d},
                {0x2060, 0x2065},
                {0x206a, 0x206f},
                {0xfff0, 0xfffb},
                {0x1bca0, 0x1bca3},
                {0x1d173, 0x1d17a},
                {0xe0000, 0xe00ff},
                {0xe01f0, 0xe0fff}})) {
    return Kind::kInvisibleFormat;
  }
  if (c == 0x200c || c == 0x200d) return Kind::kJoiner;
  if (c == 0x00a0 || c == 0x1680 || c == 0x202f || c == 0x205f || c == 0x3000 || c == 0x115f ||
      c == 0x1160 || c == 0x3164 || c == 0xffa0 || c == 0x2800 || InAny(c, {{0x2000, 0x200a}})) {
    return Kind::kBlank;
  }
  if (InAny(c, {{0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05bd}, {0x05bf, 0x05bf},
                {0x05c1, 0x05c2}, {0x05c4, 0x05c5}, {0x05c7, 0x05c7}, {0x0610, 0x061a},
                {0x064b, 0x065f}, {0x0670, 0x0670}, {0x06d6, 0x06dc}, {0x06df, 0x06e4},
                {0x06e7, 0x06e8}, {0x06ea, 0x06ed}, {0x0e31, 0x0e31}, {0x0e34, 0x0e3a},
                {0x0e47, 0x0e4e}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff}, {0x20d0, 0x20ff},
                {0x3099, 0x309a}, {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f}, {0xe0100, 0xe01ef}})) {
    return Kind::kMark;
  }
  if (InAny(c, {{0xe000, 0xf8ff}, {0xf0000, 0x10ffff}, {0xfdd0, 0xfdef}}) ||
      (c & 0xfffe) == 0xfffe) {
    return Kind::kUnprintable;
  }
  return Kind::kVisible;
}

struct Char {
  char32_t c;
  Kind kind;
  size_t offset, size;
};

std::string Refusal(std::string_view what, const Char& ch, size_t position) {
  return absl::StrFormat("a display name cannot contain %s (U+%04X at character %d)", what,
                         static_cast<uint32_t>(ch.c), position);
}

// The ASCII character `c` looks like (lower case, with 'i', '1' and '|' as 'l' and '0' as
// 'o'), or `c` itself when it is like none.
char32_t LooksLike(char32_t c) {
  // Fullwidth ASCII.
  if (c >= 0xff01 && c <= 0xff5e) c -= 0xfee0;
  // Mathematical alphanumeric letters: thirteen alphabets of A-Z a-z in a row, then digits.
  if (c >= 0x1d400 && c <= 0x1d6a3) {
    const int k = static_cast<int>((c - 0x1d400) % 52);
    c = k < 26 ? 'A' + k : 'a' + (k - 26);
  } else if (c >= 0x1d7ce && c <= 0x1d7ff) {
    c = '0' + (c - 0x1d7ce) % 10;
  }
  struct Pair {
    char32_t from;
    char to;
  };
  // Cyrillic, Greek, Armenian and Latin letters that read as ASCII ones in common fonts.
  static constexpr Pair kLookAlikes[] = {
      {0x0430, 'a'}, {0x0410, 'a'}, {0x0432, 'b'}, {0x0412, 'b'}, {0x0435, 'e'}, {0x0415, 'e'},
      {0x0451, 'e'}, {0x0401, 'e'}, {0x041a, 'k'}, {0x043a, 'k'}, {0x041c, 'm'}, {0x043c, 'm'},
      {0x041d, 'h'}, {0x043d, 'h'}, {0x043e, 'o'}, {0x041e, 'o'}, {0x0440, 'p'}, {0x0420, 'p'},
      {0x0441, 'c'}, {0x0421, 'c'}, {0x0442, 't'}, {0x0422, 't'}, {0x0443, 'y'}, {0x0423, 'y'},
      {0x0445, 'x'}, {0x0425, 'x'}, {0x0455, 's'}, {0x0405, 's'}, {0x0456, 'i'}, {0x0406, 'l'},
      {0x0458, 'j'}, {0x0408, 'j'}, {0x0501, 'd'}, {0x051b, 'q'}, {0x051d, 'w'}, {0x04bb, 'h'},
      {0x04cf, 'l'}, {0x0391, 'a'}, {0x03b1, 'a'}, {0x0392, 'b'}, {0x0395, 'e'}, {0x0396, 'z'},
      {0x0397, 'h'}, {0x0399, 'l'}, {0x03b9, 'i'}, {0x039a, 'k'}, {0x03ba, 'k'}, {0x039c, 'm'},
      {0x039d, 'n'}, {0x03bd, 'v'}, {0x039f, 'o'}, {0x03bf, 'o'}, {0x03a1, 'p'}, {0x03c1, 'p'},
      {0x03a4, 't'}, {0x03c4, 't'}, {0x03a5, 'y'}, {0x03c5, 'u'}, {0x03a7, 'x'}, {0x03c7, 'x'},
      {0x0578, 'n'}, {0x057d, 'u'}, {0x0585, 'o'}, {0x0131, 'i'}, {0x0269, 'i'}, {0x01c0, 'l'},
      {0x0261, 'g'}, {0x1d00, 'a'}, {0x0299, 'b'}, {0x1d04, 'c'}, {0x1d05, 'd'}, {0x1d07, 'e'},
      {0x0262, 'g'}, {0x029c, 'h'}, {0x026a, 'i'}, {0x1d0a, 'j'}, {0x1d0b, 'k'}, {0x029f, 'l'},
      {0x1d0d, 'm'}, {0x0274, 'n'}, {0x1d0f, 'o'}, {0x1d18, 'p'}, {0x0280, 'r'}, {0xa731, 's'},
      {0x1d1b, 't'}, {0x1d1c, 'u'}, {0x1d20, 'v'}, {0x1d21, 'w'}, {0x028f, 'y'}, {0x1d22, 'z'},
      {0x2160, 'l'}, {0x217c, 'l'}, {0x2170, 'i'}, {0x2223, 'l'}, {0xff5c, 'l'}, {0x2010, '-'},
      {0x2011, '-'}, {0x2012, '-'}, {0x2013, '-'}, {0x2212, '-'}, {0xff08, '('}, {0xff09, ')'},
  };
  for (const Pair& p : kLookAlikes) {
    if (p.from == c) {
      c = static_cast<unsigned char>(p.to);
      break;
    }
  }
  if (c >= 'A' && c <= 'Z') c += 'a' - 'A';
  // Capital I, small l, the digit one and the bar are one stroke in many fonts; i is close.
  if (c == 'i' || c == '1' || c == '|') return 'l';
  if (c == '0') return 'o';
  return c;
}

// "bot", or "bot" followed by a blank, '(' or ':', however it is written (joiners between its
// letters, look-alike letters: "bоt (hard)" with a Cyrillic o, fullwidth "ｂｏｔ").
bool ReadsAsABot(const std::vector<Char>& chars) {
  std::vector<const Char*> shown;
  for (const Char& ch : chars) {
    if (ch.kind != Kind::kJoiner && ch.kind != Kind::kMark) shown.push_back(&ch);
  }
  if (shown.size() < 3 || LooksLike(shown[0]->c) != 'b' || LooksLike(shown[1]->c) != 'o' ||
      LooksLike(shown[2]->c) != 't') {
    return false;
  }
  return shown.size() == 3 || shown[3]->kind == Kind::kBlank || LooksLike(shown[3]->c) == '(' ||
         LooksLike(shown[3]->c) == ':';
}

// Whether the name holds one of the marks the board and the lists write after a name, "(you)",
// "(guest)" or "(open)", however it is written: a guest "alice (you)" would read, on the
// opponent's board, as the opponent's own seat; "(open)" as a seat anyone can take.
bool HoldsABoardMark(const std::vector<Char>& chars) {
  std::string shown;
  for (const Char& ch : chars) {
    if (ch.kind != Kind::kVisible) continue;
    const char32_t l = LooksLike(ch.c);
    if (l < 0x80) shown.push_back(static_cast<char>(l));
  }
  for (std::string_view mark : {"(you)", "(guest)", "(open)"}) {
    if (shown.find(mark) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> CleanDisplayName(std::string_view raw) {
  // Names are short: a long input is refused before it is decoded (gRPC bounds it anyway).
  if (raw.size() > 16 * kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a display name has at most ", kMaxNameBytes, " bytes"));
  }
  std::vector<Char> chars;
  for (size_t at = 0; at < raw.size();) {
    Char ch{};
    ch.offset = at;
    ch.size = DecodeUtf8(raw.substr(at), &ch.c);
    if (ch.size == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("a display name must be valid UTF-8 (byte ", at + 1, " is not)"));
    }
    ch.kind = Classify(ch.c);
    chars.push_back(ch);
    at += ch.size;
  }
  for (size_t i = 0; i < chars.size(); ++i) {
    switch (chars[i].kind) {
      case Kind::kControl:
        return absl::InvalidArgumentError(Refusal("control characters", chars[i], i + 1));
      case Kind::kBidi:
        return absl::InvalidArgumentError(
            Refusal("bidirectional formatting characters", chars[i], i + 1));
      case Kind::kInvisibleFormat:
        return absl::InvalidArgumentError(
            Refusal("invisible formatting characters", chars[i], i + 1));
      case Kind::kUnprintable:
        return absl::InvalidArgumentError(
            Refusal("private-use or non-characters", chars[i], i + 1));
      default:
        break;
    }
  }
  const auto trimmed = [](Kind k) { return k == Kind::kBlank || k == Kind::kJoiner; };
  size_t first = 0, last = chars.size();
  while (first < last && trimmed(chars[first].kind)) ++first;
  while (last > first && trimmed(chars[last - 1].kind)) --last;
  chars = std::vector<Char>(chars.begin() + first, chars.begin() + last);

  bool visible = false;
  int marks = 0;
  for (size_t i = 0; i < chars.size(); ++i) {
    const Char& ch = chars[i];
    if (ch.kind == Kind::kMark) {
      if (i == 0 || chars[i - 1].kind == Kind::kBlank) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "a display name cannot have a combining mark without a character before it (U+%04X "
            "at character %d)",
            static_cast<uint32_t>(ch.c), i + 1));
      }
      if (++marks > kMaxMarksPerCharacter) {
        return absl::InvalidArgumentError(
            absl::StrCat("a display name has at most ", kMaxMarksPerCharacter,
                         " combining marks on one character (character ", i + 1, " is one more)"));
      }
    } else if (ch.kind != Kind::kJoiner) {
      marks = 0;
      visible = visible || ch.kind == Kind::kVisible;
    }
  }
  if (!visible) return absl::InvalidArgumentError("a display name is required");
  if (chars.size() > kMaxNameCharacters) {
    return absl::InvalidArgumentError(
        absl::StrCat("a display name has at most ", kMaxNameCharacters, " characters"));
  }
  const size_t begin = chars.front().offset;
  const size_t end = chars.back().offset + chars.back().size;
  if (end - begin > kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a display name has at most ", kMaxNameBytes, " bytes"));
  }
  if (ReadsAsABot(chars)) {
    return absl::InvalidArgumentError(
        "display names such as \"bot\" or \"bot (level)\" are kept for bot seats");
  }
  if (HoldsABoardMark(chars)) {
    return absl::InvalidArgumentError(
        "a display name cannot hold \"(you)\", \"(guest)\" or \"(open)\": the board writes "
        "those after names");
  }
  return std::string(raw.substr(begin, end - begin));
}

std::string NameSkeleton(std::string_view name) {
  std::string folded;
  for (size_t at = 0; at < name.size();) {
    char32_t c = 0;
    const size_t n = DecodeUtf8(name.substr(at), &c);
    if (n == 0) {
      // Not UTF-8 (no name gets this far): the byte as it is.
      folded.push_back(name[at++]);
      continue;
    }
    at += n;
    const Kind kind = Classify(c);
    if (kind == Kind::kBlank || kind == Kind::kJoiner || kind == Kind::kMark ||
        kind == Kind::kInvisibleFormat || kind == Kind::kBidi) {
      continue;
    }
    const char32_t l = LooksLike(c);
    if (l == '_' || l == '-' || l == '.') continue;
    if (l < 0x80) {
      folded.push_back(static_cast<char>(l));
    } else {
      // Anything else as its UTF-8 bytes, unchanged.
      folded.append(name.substr(at - n, n));
    }
  }
  std::string out;
  for (size_t i = 0; i < folded.size(); ++i) {
    if (i + 1 < folded.size() && folded[i] == 'r' && folded[i + 1] == 'n') {
      out.push_back('m');
      ++i;
    } else if (i + 1 < folded.size() && folded[i] == 'v' && folded[i + 1] == 'v') {
      out.push_back('w');
      ++i;
    } else {
      out.push_back(folded[i]);
    }
  }
  return out;
}

absl::Status CheckPlayerName(std::string_view name) {
  const auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  };
  if (name.size() < 2 || name.size() > 24 || !std::all_of(name.begin(), name.end(), allowed) ||
      !allowed(name[0]) || name[0] == '_' || name[0] == '-' || name[0] == '.') {
    return absl::InvalidArgumentError(
        "a player's name has 2 to 24 characters: letters, digits, '_', '-' and '.', beginning "
        "with a letter or a digit");
  }
  // However it is written: "b0t-hard", "80t_hard", "6ot-hard" and "bo7" read as bot:hard on a
  // leaderboard.
  std::string skeleton = NameSkeleton(name);
  std::string as_bot = skeleton;
  if (!as_bot.empty() && (as_bot[0] == '8' || as_bot[0] == '6')) as_bot[0] = 'b';
  if (as_bot.size() >= 3 && as_bot[2] == '7') as_bot[2] = 't';
  if (absl::StartsWith(as_bot, "bot")) {
    return absl::InvalidArgumentError("names beginning with 'bot' are kept for the bots");
  }
  // Names that would speak for the house, or read as a guest's or a seat's mark.
  for (std::string_view kept :
       {"admin", "administrator", "root", "system", "server", "lobby", "ply", "moderator", "mod",
        "operator", "support", "staff", "guest", "anonymous", "nobody", "open", "you"}) {
    if (skeleton == NameSkeleton(kept)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the name ", std::string(name), " is kept: it reads as the house's or a board mark"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ply::lobby
