// Text from other people (display names, result sentences that quote them) made safe to print
// on a terminal or to write into a record: valid UTF-8 only, and nothing that moves the cursor,
// changes colours or reorders what follows. Names are cleaned when the lobby takes them, but a
// record may come from an older lobby or another program.
#ifndef PLY_ENGINE_CORE_DISPLAY_TEXT_H_
#define PLY_ENGINE_CORE_DISPLAY_TEXT_H_

#include <string>
#include <string_view>

namespace ply {

// `text` with C0 and C1 control characters, DEL, bidirectional overrides, embeddings and
// isolates (U+202A-U+202E, U+2066-U+2069) and bytes that are not UTF-8 each replaced by U+FFFD.
std::string DisplayText(std::string_view text);

// DisplayText for a PDN (or PGN) tag value: also a backslash and a double quote escaped, so a
// value cannot close its tag and forge another.
std::string PdnTagValue(std::string_view text);

}  // namespace ply

#endif  // PLY_ENGINE_CORE_DISPLAY_TEXT_H_
