// Correlation pairs events across block boundaries: the same stream cut into blocks of 1, 7
// and 1000 tags, into scripted blocks with empty blocks in the gaps, or produced by the
// synthetic source with quiet stretches (empty blocks), gives the brute-force histogram and
// bit-identical results whatever the cut.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "support/pairs.hpp"
#include "support/reference.hpp"
#include "support/synthetic.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/correlation.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

struct Snapshot {
  std::vector<std::int64_t> counts;
  std::vector<double> normalized;
};

Snapshot snapshot(const Correlation& correlation) {
  return {correlation.getData(), correlation.getDataNormalized()};
}

}  // namespace

TEST_CASE("Correlation does not depend on the block size", "[correlation][blocks]") {
  constexpr timestamp_t kEnd = 3'000'000;
  // A window of 2 x 2 ns around mean gaps of 500 ps: every event has partners in other blocks.
  const std::vector<Tag> tags = randomTags(21, {1, 2}, 0, kEnd, 500.0);
  const auto cross_ref = correlationReference(tags, 1, 2, 100, 40, 0, kEnd);
  const auto auto_ref = correlationReference(tags, 2, CHANNEL_UNUSED, 75, 53, 0, kEnd);

  std::vector<Snapshot> cross_runs, auto_runs;
  for (std::size_t block_size : {1, 7, 1000}) {
    INFO("block size " << block_size);
    Correlation cross("cross", 1, 2, 100, 40);
    Correlation self("auto", 2, CHANNEL_UNUSED, 75, 53);
    runMemory(tags, block_size, 0, kEnd, {&cross, &self});
    CHECK(cross.getData() == cross_ref.counts);
    CHECK(self.getData() == auto_ref.counts);
    cross_runs.push_back(snapshot(cross));
    auto_runs.push_back(snapshot(self));
  }
  for (std::size_t i = 1; i < cross_runs.size(); ++i) {
    CHECK(cross_runs[i].counts == cross_runs[0].counts);
    CHECK(sameBits(cross_runs[i].normalized, cross_runs[0].normalized));
    CHECK(auto_runs[i].counts == auto_runs[0].counts);
    CHECK(sameBits(auto_runs[i].normalized, auto_runs[0].normalized));
  }
}

TEST_CASE("Correlation pairs events across empty blocks", "[correlation][blocks]") {
  // Bursts of 40 tags in 20 ns, 5 ns apart: shorter than the 8 ns half window, so pairs span
  // the silent gaps, which the cut fills with empty blocks.
  const std::vector<Tag> tags = burstyTags(31, {1, 2}, 1000, 60, 40, 20'000, 5'000);
  const timestamp_t end = tags.back().time + 10'000;
  const std::uint64_t seed = GENERATE(1, 2, 3);
  const std::vector<DrainedBlock> blocks = cutIntoBlocks(tags, 0, end, seed, 0.3, 0.5);
  std::size_t empty = 0;
  for (const auto& block : blocks) empty += block.tags.empty() ? 1 : 0;
  REQUIRE(empty >= 10);

  Correlation cross("cross", 1, 2, 1000, 16);
  Correlation self("auto", 1, 1, 999, 17);
  runScripted(blocks, {&cross, &self});
  const auto cross_ref = correlationReference(tags, 1, 2, 1000, 16, 0, end);
  const auto auto_ref = correlationReference(tags, 1, 1, 999, 17, 0, end);
  CHECK(cross.getData() == cross_ref.counts);
  CHECK(self.getData() == auto_ref.counts);
  CHECK(sameValues(cross.getDataNormalized(), cross_ref.normalized(), 1e-12));
  CHECK(cross.getCaptureDuration() == end);
}

TEST_CASE("Correlation over synthetic blocks with quiet stretches equals the brute force",
          "[correlation][blocks]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 2e6), SyntheticChannel::clock(2, 1e6, 200),
                     SyntheticChannel::partner(3, 1, 1500, 300, 0.5)};
  config.seed = 41;
  config.duration_ps = 5'000'000'000;      // 5 ms, ~17500 tags
  config.max_block_duration_ps = 300'000;  // 0.3 us per block at most: many empty blocks
  config.block_size = GENERATE(1, 7, 1000);
  const DrainedStream stream = drainSynthetic(config);
  INFO("block size " << config.block_size << ", " << stream.blocks.size() << " blocks");
  REQUIRE(stream.emptyBlocks() > 0);

  SyntheticSource source(config);
  Correlation partner("partner", 3, 1, 100, 41);
  Correlation clock("clock", 2, CHANNEL_UNUSED, 5000, 500);
  runGraph(source, {&partner, &clock});
  CHECK(partner.getData() ==
        correlationReference(stream.tags, 3, 1, 100, 41, stream.begin(), stream.end()).counts);
  CHECK(clock.getData() == correlationReference(stream.tags, 2, CHANNEL_UNUSED, 5000, 500,
                                                stream.begin(), stream.end())
                               .counts);
}
