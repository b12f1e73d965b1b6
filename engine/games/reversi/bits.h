// Bit sets for Reversi boards of any supported size, and the board geometry that moves them.
//
// Boards of up to 64 cells use one uint64_t; larger ones (up to 16x16) use Bits256. The move
// generation and flip code in reversi.cc is written once as templates over both. Cell (column c,
// row r), r = 0 at the top, is bit r * width + c; a shift by one moves a disc one column, a shift
// by `width` one row, and a per-direction mask removes discs that wrapped around an edge or left
// the playable cells.
#ifndef PLY_ENGINE_GAMES_REVERSI_BITS_H_
#define PLY_ENGINE_GAMES_REVERSI_BITS_H_

#include <bit>
#include <cstdint>
#include <type_traits>

namespace ply::reversi {

struct Bits256 {
  uint64_t w[4] = {0, 0, 0, 0};

  friend Bits256 operator&(Bits256 a, const Bits256& b) {
    for (int i = 0; i < 4; ++i) a.w[i] &= b.w[i];
    return a;
  }
  friend Bits256 operator|(Bits256 a, const Bits256& b) {
    for (int i = 0; i < 4; ++i) a.w[i] |= b.w[i];
    return a;
  }
  friend Bits256 operator^(Bits256 a, const Bits256& b) {
    for (int i = 0; i < 4; ++i) a.w[i] ^= b.w[i];
    return a;
  }
  friend Bits256 operator~(Bits256 a) {
    for (int i = 0; i < 4; ++i) a.w[i] = ~a.w[i];
    return a;
  }
  Bits256& operator&=(const Bits256& b) { return *this = *this & b; }
  Bits256& operator|=(const Bits256& b) { return *this = *this | b; }
  Bits256& operator^=(const Bits256& b) { return *this = *this ^ b; }
  // Shifts by 0 < s < 64 bits towards higher (<<) or lower (>>) indices.
  friend Bits256 operator<<(const Bits256& a, int s) {
    Bits256 r;
    r.w[0] = a.w[0] << s;
    for (int i = 1; i < 4; ++i) r.w[i] = (a.w[i] << s) | (a.w[i - 1] >> (64 - s));
    return r;
  }
  friend Bits256 operator>>(const Bits256& a, int s) {
    Bits256 r;
    r.w[3] = a.w[3] >> s;
    for (int i = 0; i < 3; ++i) r.w[i] = (a.w[i] >> s) | (a.w[i + 1] << (64 - s));
    return r;
  }
  bool operator==(const Bits256&) const = default;
};

inline bool Any(uint64_t b) { return b != 0; }
inline bool Any(const Bits256& b) { return (b.w[0] | b.w[1] | b.w[2] | b.w[3]) != 0; }
inline int PopCount(uint64_t b) { return std::popcount(b); }
inline int PopCount(const Bits256& b) {
  return std::popcount(b.w[0]) + std::popcount(b.w[1]) + std::popcount(b.w[2]) +
         std::popcount(b.w[3]);
}
inline bool Test(uint64_t b, int i) { return (b >> i) & 1; }
inline bool Test(const Bits256& b, int i) { return (b.w[i >> 6] >> (i & 63)) & 1; }

template <class B>
B CellBit(int i) {
  if constexpr (std::is_same_v<B, uint64_t>) {
    return uint64_t{1} << i;
  } else {
    Bits256 b;
    b.w[i >> 6] = uint64_t{1} << (i & 63);
    return b;
  }
}

// Calls f(cell) for every set bit, lowest first.
template <class F>
void ForEachBit(uint64_t b, F&& f) {
  for (; b != 0; b &= b - 1) f(std::countr_zero(b));
}
template <class F>
void ForEachBit(const Bits256& b, F&& f) {
  for (int i = 0; i < 4; ++i) {
    for (uint64_t w = b.w[i]; w != 0; w &= w - 1) f(i * 64 + std::countr_zero(w));
  }
}

// Shifts by any amount >= 0 towards higher (Up) or lower (Down) indices; bits shifted past the
// end are lost.
inline uint64_t ShiftUp(uint64_t b, int s) { return s < 64 ? b << s : 0; }
inline uint64_t ShiftDown(uint64_t b, int s) { return s < 64 ? b >> s : 0; }
inline Bits256 ShiftUp(const Bits256& a, int s) {
  Bits256 r;
  const int words = s >> 6, bits = s & 63;
  for (int i = 3; i >= words; --i) {
    r.w[i] = a.w[i - words] << bits;
    if (bits != 0 && i - words - 1 >= 0) r.w[i] |= a.w[i - words - 1] >> (64 - bits);
  }
  return r;
}
inline Bits256 ShiftDown(const Bits256& a, int s) {
  Bits256 r;
  const int words = s >> 6, bits = s & 63;
  for (int i = 0; i + words < 4; ++i) {
    r.w[i] = a.w[i + words] >> bits;
    if (bits != 0 && i + words + 1 < 4) r.w[i] |= a.w[i + words + 1] << (64 - bits);
  }
  return r;
}

// How discs move on a board of a given shape. Directions come in opposite pairs (d, d ^ 1).
template <class B>
struct Geometry {
  // Playable cells: on the board and not a wall.
  B board{};
  // After a shift in direction d, only these cells are kept (no wrap-around, no walls).
  B keep[8]{};
  // Shift amount: > 0 towards higher bit indices, < 0 towards lower ones.
  int shift[8] = {};
  // The longest run of discs a move can flip in one direction: max(width, height) - 2.
  int run = 0;

  B Shift(const B& b, int d) const {
    const int s = shift[d];
    return (s > 0 ? b << s : b >> -s) & keep[d];
  }
  bool operator==(const Geometry&) const = default;
};

}  // namespace ply::reversi

#endif  // PLY_ENGINE_GAMES_REVERSI_BITS_H_
