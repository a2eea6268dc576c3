// PacedSource: the same blocks as the source it paces, released no earlier than their stream
// time divided by the speed; the synthetic source takes `speed` from its configuration; a
// speed outside its range is refused naming the value.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>

#include "support/drain.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/paced_source.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

SyntheticConfig shortStream() {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 2e5), SyntheticChannel::clock(2, 1e5, 10)};
  config.duration_ps = 100'000'000'000;  // 0.1 s
  config.max_block_duration_ps = 5'000'000'000;
  return config;
}

}  // namespace

TEST_CASE("A paced source hands out the same blocks, not before their stream time", "[io]") {
  SyntheticSource plain(shortStream());
  const DrainedStream expected = drain(plain);
  for (const double speed : {1.0, 4.0}) {
    INFO("speed " << speed);
    PacedSource paced(std::make_unique<SyntheticSource>(shortStream()), speed);
    const auto began = std::chrono::steady_clock::now();
    const DrainedStream got = drain(paced);
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    REQUIRE(got.blocks.size() == expected.blocks.size());
    CHECK(got.tags == expected.tags);
    // The last block is released once its end, 0.1 s of stream after the first block's begin,
    // is due at this speed (a margin of one block's 5 ms for the clock's resolution).
    CHECK(wall_s >= (0.1 - 0.005) / speed);
    CHECK_THAT(paced.describe(), Contains("speed="));
  }
}

TEST_CASE("The synthetic source is paced by its speed key, and bad speeds are refused", "[io]") {
  SourceSpec spec{"synthetic", Parameters{{"speed", 2.0}, {"duration_ps", std::int64_t{1000}}}, {}};
  const auto source = makeSource(spec);
  const auto* paced = dynamic_cast<const PacedSource*>(source.get());
  REQUIRE(paced != nullptr);
  CHECK(paced->speed() == 2.0);
  spec.parameters.set("speed", -1.0);
  CHECK(dynamic_cast<const PacedSource*>(makeSource(spec).get()) == nullptr);
  spec.parameters.set("speed", 0.0);
  CHECK_THROWS_WITH(makeSource(spec), Contains("speed 0 is invalid") && Contains("0.001 to 1e6"));
  CHECK_THROWS_AS(PacedSource(std::make_unique<SyntheticSource>(shortStream()), 2e6),
                  InvalidArgument);
}

TEST_CASE("A stop request ends a paced source's wait at once", "[io]") {
  SyntheticConfig config = shortStream();
  config.duration_ps = 2'000'000'000'000;  // 2 s in blocks of 1 s, at 0.01 x: 100 s a block
  config.max_block_duration_ps = 1'000'000'000'000;
  PacedSource paced(std::make_unique<SyntheticSource>(config), 0.01);
  auto first = std::async(std::launch::async, [&] {
    BlockBuffer block;
    block.storage.reserve(paced.maxBlockTags());
    return paced.next(block);
  });
  CHECK(first.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
  paced.requestStop();
  REQUIRE(first.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(first.get());  // the block is handed out, unpaced
}
