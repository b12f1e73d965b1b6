#include "lobby-server/token.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstdint>
#include <stdexcept>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ply::lobby {
namespace {
constexpr std::string_view kPrefix = "ply_";
}

std::string NewSeatToken() {
  unsigned char bytes[16];
  // RAND_bytes draws from the OS entropy source; failure means no safe token can be made.
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) throw std::runtime_error("no random bytes");
  return std::string(kPrefix) +
         absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(bytes), sizeof(bytes)));
}

bool IsWellFormedToken(std::string_view token) {
  if (token.size() != kPrefix.size() + 32 || token.substr(0, kPrefix.size()) != kPrefix) {
    return false;
  }
  for (char c : token.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string RematchToken(std::string_view token) {
  return std::string(kPrefix) +
         TokenHash(absl::StrCat("ply rematch of ", absl::string_view(token.data(), token.size())))
             .substr(0, 32);
}

std::string TokenHash(std::string_view token) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), sizeof(digest)));
}

bool SameTokenHash(std::string_view a, std::string_view b) {
  return a.size() == b.size() && !a.empty() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace ply::lobby
