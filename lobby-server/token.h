// Seat tokens: 128 random bits from the operating system's CSPRNG, written as text, and the
// one-way hash of a token that is all the database keeps of it.
#ifndef PLY_LOBBY_SERVER_TOKEN_H_
#define PLY_LOBBY_SERVER_TOKEN_H_

#include <string>
#include <string_view>

namespace ply::lobby {

// "ply_" followed by 32 lowercase hex digits.
std::string NewSeatToken();
// Whether `token` has the form NewSeatToken produces (anything else is garbage).
bool IsWellFormedToken(std::string_view token);
// The token of the same player's seat in the rematch of the match `token` is a seat of: derived
// from it one way (SHA-256), so the lobby can hand it to that player whenever they ask with the
// old token, and needs to keep nothing but its hash.
std::string RematchToken(std::string_view token);
// Hex SHA-256 of the token text.
std::string TokenHash(std::string_view token);
// Compares two token hashes in time that does not depend on where they differ.
bool SameTokenHash(std::string_view a, std::string_view b);

}  // namespace ply::lobby

#endif  // PLY_LOBBY_SERVER_TOKEN_H_
