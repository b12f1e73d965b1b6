// Text from other people (display names, result sentences that quote them) made safe to print
// on a terminal or to write into a record: valid UTF-8 only, and nothing that moves the cursor,
// changes colours or reorders what follows. Names are cleaned when the lobby takes them, but a
// record may come from an older lobby or another program.
#ifndef PLY_ENGINE_CORE_DISPLAY_TEXT_H_
#define PLY_ENGINE_CORE_DISPLAY_TEXT_H_

#include <string>
#include <string_view>

namespace ply {

// Decodes the UTF-8 sequence at the start of `s` into *c: its length, or 0 when it is not
// well-formed (empty, truncated, overlong, a surrogate, past U+10FFFF).
size_t DecodeUtf8(std::string_view s, char32_t* c);
// C0 and C1 control characters, DEL, and the line and paragraph separators (U+2028, U+2029):
// what moves a cursor or starts a new line.
bool IsControlCharacter(char32_t c);
// Bidirectional formatting: the marks (ALM, LRM, RLM), embeddings and overrides
// (U+202A-U+202E) and isolates (U+2066-U+2069): what reorders the text after it.
bool IsBidiFormatting(char32_t c);

// `text` with control characters, bidirectional formatting (both as above) and bytes that are
// not UTF-8 each replaced by U+FFFD. The lobby's name rules (lobby-server/names.h) refuse the
// same characters.
std::string DisplayText(std::string_view text);

// DisplayText for a PDN (or PGN) tag value: also a backslash and a double quote escaped, so a
// value cannot close its tag and forge another.
std::string PdnTagValue(std::string_view text);

}  // namespace ply

#endif  // PLY_ENGINE_CORE_DISPLAY_TEXT_H_
