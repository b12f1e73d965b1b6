// A fixed-capacity list of moves that lives on the stack: move generation never touches the heap.
#ifndef PLY_ENGINE_CORE_MOVE_LIST_H_
#define PLY_ENGINE_CORE_MOVE_LIST_H_

#include <array>
#include <cassert>
#include <cstddef>

namespace ply {

template <class M, int kCapacity>
class MoveList {
 public:
  void push_back(M m) {
    assert(size_ < kCapacity);
    moves_[size_++] = m;
  }
  void clear() { size_ = 0; }
  // Keeps the first `n` moves (n <= size()).
  void truncate(int n) {
    assert(n >= 0 && n <= size_);
    size_ = n;
  }
  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  M& operator[](int i) { return moves_[i]; }
  const M& operator[](int i) const { return moves_[i]; }
  M* begin() { return moves_.data(); }
  M* end() { return moves_.data() + size_; }
  const M* begin() const { return moves_.data(); }
  const M* end() const { return moves_.data() + size_; }
  bool contains(const M& m) const {
    for (int i = 0; i < size_; ++i) {
      if (moves_[i] == m) return true;
    }
    return false;
  }

 private:
  std::array<M, kCapacity> moves_;
  int size_ = 0;
};

}  // namespace ply

#endif  // PLY_ENGINE_CORE_MOVE_LIST_H_
