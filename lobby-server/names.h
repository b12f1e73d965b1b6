// Display names as players type them, made safe to show to everyone else: other players'
// terminals, spectators, logs and exported records print them, so a name may hold printable
// text only. Refused: invalid UTF-8; C0 and C1 controls and line separators; bidirectional
// formatting characters (embeddings, overrides, isolates, marks), which reorder the text around
// the name; invisible formatting characters (zero-width space, word joiner, soft hyphen, tags);
// private-use and non-characters; a combining mark with no character before it, or more than
// kMaxMarksPerCharacter on one character (stacks that paint over neighbouring lines); names
// that show nothing (only spaces, NBSP, zero-width joiners, Hangul or Braille blanks); names
// longer than kMaxNameCharacters code points or kMaxNameBytes bytes; and names that read as a
// bot seat's ("bot", "bot (hard)", "Bot(easy)"). Blanks and joiners at either end are trimmed.
//
// Errors are INVALID_ARGUMENT with a sentence that names the offending code point and its
// position, never the name itself.
#ifndef PLY_LOBBY_SERVER_NAMES_H_
#define PLY_LOBBY_SERVER_NAMES_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ply::lobby {

inline constexpr size_t kMaxNameCharacters = 24;
inline constexpr size_t kMaxNameBytes = 40;
inline constexpr int kMaxMarksPerCharacter = 2;

// The name to store and show, trimmed; or why it cannot be one.
absl::StatusOr<std::string> CleanDisplayName(std::string_view raw);

// A player's name (ply login NAME): 2 to 24 characters, each a letter, a digit, '_', '-' or
// '.', the first a letter or a digit; names of bots ("bot" and what starts with it) refused.
// Unique ignoring case and look-alikes (the store checks that, by NameSkeleton).
absl::Status CheckPlayerName(std::string_view name);

// What a name looks like, so that names a reader cannot tell apart have one skeleton (after
// Unicode TR39's idea of a skeleton, with a small table instead of confusables.txt): fullwidth
// and mathematical letters as their ASCII letters, Cyrillic and Greek look-alikes as the Latin
// letters they resemble, case folded with 'i', '1' and '|' as 'l' and '0' as 'o', "rn" as "m"
// and "vv" as "w", and blanks, joiners, combining marks and the separators "_-." left out.
// "aIice", "ALICE", "а1ice" (Cyrillic a) and "ａｌｉｃｅ" all have the skeleton "allce".
std::string NameSkeleton(std::string_view name);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_NAMES_H_
