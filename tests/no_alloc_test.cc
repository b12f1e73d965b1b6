// Hot paths do not allocate: move generation, make/undo, evaluation and the search of every game
// run without touching the heap. Counted by replacing the global operator new for this test
// binary; a search may allocate only for its result (a few vectors per iteration), never per node.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "engine/registry/registry.h"

namespace {
std::atomic<int64_t> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace ply {
namespace {

TEST(NoAllocation, SearchesOfEveryGameAllocateOnlyForTheirResults) {
  for (const GameInfo& info : ListGames()) {
    SCOPED_TRACE(info.name);
    auto game = CreateGame(info.name);
    ASSERT_TRUE(game.ok());
    // A few moves in, so that every game has something to think about.
    for (int i = 0; i < 4; ++i) ASSERT_TRUE((*game)->Play((*game)->LegalMoves()[0]).ok());
    SearchCache cache(4);
    SearchRequest request{.level = {.name = "test", .time_ms = 0}, .max_nodes = 200000};
    // The first search builds the tables; the second must not allocate per node.
    ASSERT_TRUE((*game)->ChooseMove(request, &cache).ok());
    int64_t before = allocations.load();
    auto report = (*game)->ChooseMove(request, &cache);
    int64_t used = allocations.load() - before;
    ASSERT_TRUE(report.ok());
    // Games small enough to be solved stop early; the others use the whole budget.
    if (!report->exact) {
      EXPECT_GE(report->nodes, 100000);
    }
    EXPECT_LT(used, 20 * (report->depth + 5))
        << used << " allocations for " << report->nodes << " nodes at depth " << report->depth;
  }
}

}  // namespace
}  // namespace ply
