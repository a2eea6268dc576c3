// BlockPool and BlockRef: a fixed set of buffers, recycled when the last reference drops.
#include <catch2/catch.hpp>

#include <vector>

#include "tagflow/core/block_pool.hpp"

using namespace tagflow;

TEST_CASE("BlockPool hands out each buffer once until it comes back", "[block_pool]") {
  BlockPool pool(3, 100);
  REQUIRE(pool.capacity() == 3);
  REQUIRE(pool.freeCount() == 3);
  std::vector<PooledBlock*> taken;
  for (int i = 0; i < 3; ++i) taken.push_back(pool.tryAcquire());
  CHECK(taken[0] != nullptr);
  CHECK(taken[0] != taken[1]);
  CHECK(taken[1] != taken[2]);
  CHECK(taken[0]->buffer.storage.capacity() >= 100);  // reserved up front
  CHECK(pool.tryAcquire() == nullptr);
  CHECK(pool.freeCount() == 0);
  pool.giveBack(taken[1]);
  CHECK(pool.freeCount() == 1);
  CHECK(pool.tryAcquire() == taken[1]);
}

TEST_CASE("The last BlockRef returns the buffer and calls the release hook once", "[block_pool]") {
  BlockPool pool(2, 8);
  int releases = 0;
  pool.setReleaseHook([&] { ++releases; });
  PooledBlock* block = pool.tryAcquire();
  REQUIRE(block != nullptr);
  {
    BlockRef first(block);
    BlockRef copy = first;
    BlockRef moved = std::move(first);
    CHECK_FALSE(static_cast<bool>(first));
    CHECK(block->references.load() == 2);
    {
      BlockRef third(copy);
      CHECK(block->references.load() == 3);
    }
    CHECK(releases == 0);
    copy = BlockRef();  // assignment drops copy's reference
    CHECK(releases == 0);
    CHECK(pool.freeCount() == 1);
  }
  CHECK(releases == 1);
  CHECK(pool.freeCount() == 2);

  // giveBack is for unpublished buffers: no release hook.
  PooledBlock* unpublished = pool.tryAcquire();
  pool.giveBack(unpublished);
  CHECK(releases == 1);
}
