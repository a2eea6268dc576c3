// MemorySource: blocks point into the caller's vector, tile [begin, end), never split tags
// that share a time, carry the special-tag index; bad input is named.
#include <catch2/catch.hpp>

#include <limits>
#include <memory>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/sources/memory_source.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

TEST_CASE("MemorySource serves the vector as tiling blocks", "[memory_source]") {
  auto tags = burstyTags(2, {1, 2}, 1000, 20, 30, 5000, 100'000);
  tags = withOverflow(tags, 300'000, 420'000);
  const auto shared = std::make_shared<const std::vector<Tag>>(tags);
  const std::size_t block_size = GENERATE(1, 7, 64, 100000);
  MemorySource source(shared, block_size);
  const DrainedStream stream = drain(source);  // also checks each block's special index
  INFO("block_size " << block_size);
  requireWellFormed(stream);
  CHECK(stream.tags == tags);
  CHECK(stream.begin() == tags.front().time);
  CHECK(stream.end() == tags.back().time + 1);
  for (const auto& block : stream.blocks) {
    CHECK_FALSE(block.tags.empty());  // blocks end at the next tag: no empty blocks here
    if (block.tags.size() > block_size) CHECK(block.tags.front().time == block.tags.back().time);
  }
  CHECK_THAT(source.describe(), Contains("block_size=" + std::to_string(block_size)));
}

TEST_CASE("MemorySource blocks point into the vector without copying", "[memory_source]") {
  const auto shared = std::make_shared<const std::vector<Tag>>(randomTags(1, {1}, 0, 10'000, 10));
  MemorySource source(shared, 100);
  BlockBuffer buffer;
  REQUIRE(source.next(buffer));
  CHECK(buffer.tags.data() == shared->data());
  REQUIRE(source.next(buffer));
  CHECK(buffer.tags.data() == shared->data() + 100);
  CHECK(source.maxBlockTags() == 0);
}

TEST_CASE("MemorySource honours an explicit interval and rewinds", "[memory_source]") {
  const auto shared = std::make_shared<const std::vector<Tag>>(
      std::vector<Tag>{makeTimeTag(1, 500), makeTimeTag(2, 500), makeTimeTag(1, 900)});
  MemorySource source(shared, 1, 100, 5000);
  const DrainedStream first = drain(source);
  requireWellFormed(first);
  REQUIRE(first.blocks.size() == 2);
  CHECK(first.begin() == 100);
  CHECK(first.blocks[0].tags.size() == 2);  // equal times stay together
  CHECK(first.blocks[0].end == 900);
  CHECK(first.end() == 5000);
  source.rewind();
  const DrainedStream again = drain(source);
  CHECK(again.tags == first.tags);
  CHECK(again.end() == 5000);

  MemorySource empty(std::make_shared<const std::vector<Tag>>(), 10, 0, 777);
  const DrainedStream nothing = drain(empty);
  REQUIRE(nothing.blocks.size() == 1);
  CHECK(nothing.blocks[0].tags.empty());
  CHECK(nothing.end() == 777);
}

TEST_CASE("MemorySource names unsorted tags, tags outside the interval, bad sizes",
          "[memory_source]") {
  const auto unsorted = std::make_shared<const std::vector<Tag>>(std::vector<Tag>{
      makeTimeTag(1, 10), makeTimeTag(1, 20), makeTimeTag(1, 30), makeTimeTag(1, 25)});
  REQUIRE_THROWS_AS(MemorySource(unsorted, 4), DataError);
  REQUIRE_THROWS_WITH(MemorySource(unsorted, 4),
                      Contains("tag 3") && Contains("25 ps") && Contains("tag 2"));
  const auto sorted = std::make_shared<const std::vector<Tag>>(
      std::vector<Tag>{makeTimeTag(1, 10), makeTimeTag(1, 20)});
  REQUIRE_THROWS_AS(MemorySource(sorted, 4, 15, 100), DataError);
  REQUIRE_THROWS_WITH(MemorySource(sorted, 4, 15, 100), Contains("tag 0") && Contains("[15, 100)"));
  REQUIRE_THROWS_WITH(MemorySource(sorted, 4, 0, 20), Contains("tag 1"));
  REQUIRE_THROWS_AS(MemorySource(sorted, 0), InvalidArgument);
  REQUIRE_THROWS_WITH(MemorySource(sorted, 4, 50, 50), Contains("[50, 50)"));
  // Times beyond +-2^62 ps, where a delay or a bin added to them would overflow.
  constexpr timestamp_t kLimit = timestamp_t{1} << 62;
  const auto far = std::make_shared<const std::vector<Tag>>(
      std::vector<Tag>{makeTimeTag(1, -kLimit - 1), makeTimeTag(1, 0)});
  REQUIRE_THROWS_WITH(MemorySource(far, 4), Contains("tag 0 at -4611686018427387905 ps") &&
                                                Contains("valid: -2^62..2^62 ps"));
  const auto last = std::make_shared<const std::vector<Tag>>(
      std::vector<Tag>{makeTimeTag(1, std::numeric_limits<timestamp_t>::max())});
  REQUIRE_THROWS_WITH(MemorySource(last, 4), Contains("tag 0 at 9223372036854775807 ps"));
  REQUIRE_THROWS_WITH(MemorySource(sorted, 4, 0, kLimit + 2),
                      Contains("interval bound 4611686018427387906 ps"));
  const auto edges = std::make_shared<const std::vector<Tag>>(
      std::vector<Tag>{makeTimeTag(1, -kLimit), makeTimeTag(1, kLimit)});
  MemorySource at_the_limits(edges, 4);
  CHECK(drain(at_the_limits).tags.size() == 2);
}
