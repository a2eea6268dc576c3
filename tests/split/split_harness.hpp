// Runs measurements over parts of a drained stream, block by block without a graph, and
// compares result sets: the tools of the split tests.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "support/drain.hpp"
#include "tagflow/core/measurement.hpp"

namespace tagflow::test {

using MeasurementFactory = std::function<std::unique_ptr<Measurement>()>;

// Feeds the blocks of `stream` that overlap [from, to) (all of them by default), as a graph
// would: only those blocks, so a shard shows it needs nothing beyond its window.
inline void feed(Measurement& measurement, const DrainedStream& stream,
                 timestamp_t from = std::numeric_limits<timestamp_t>::min(),
                 timestamp_t to = std::numeric_limits<timestamp_t>::max()) {
  // The skipped blocks still tell whether the fed stream begins inside an overflow.
  bool in_overflow = false;
  for (const DrainedBlock& block : stream.blocks) {
    if (block.end > from) break;
    for (const Tag& tag : block.tags) {
      if (tag.type == TagType::OverflowBegin) in_overflow = true;
      if (tag.type == TagType::OverflowEnd) in_overflow = false;
    }
  }
  measurement.streamStarting(in_overflow);
  std::uint64_t sequence = 0;
  for (const DrainedBlock& block : stream.blocks) {
    if (block.end <= from || block.begin >= to) continue;
    std::vector<std::uint32_t> special;
    for (std::size_t i = 0; i < block.tags.size(); ++i) {
      if (block.tags[i].type != TagType::TimeTag) special.push_back(static_cast<std::uint32_t>(i));
    }
    measurement.processBlock(TagBlock{block.tags, special, block.begin, block.end, sequence++});
  }
  measurement.streamEnded();
}

// Counts [bounds[r], bounds[r + 1]) in one shard each, fed only the blocks around its range, and
// merges the shards' states in order into a fresh measurement.
inline std::unique_ptr<Measurement> mergeRanges(const MeasurementFactory& make,
                                                const DrainedStream& stream,
                                                const std::vector<timestamp_t>& bounds) {
  auto merged = make();
  for (std::size_t r = 0; r + 1 < bounds.size(); ++r) {
    const auto shard = make();
    shard->setShardPlan(
        ShardPlan{.begin = bounds[r], .end = bounds[r + 1], .origin = stream.begin()});
    const SplitSupport margins = *shard->splitSupport();
    feed(*shard, stream, bounds[r] - margins.before, bounds[r + 1] + margins.after);
    merged->mergePartialState(shard->getPartialState());
  }
  return merged;
}

inline void requireSameArrays(const ResultSet& expected, const ResultSet& actual) {
  REQUIRE(expected.arrays.size() == actual.arrays.size());
  for (std::size_t i = 0; i < expected.arrays.size(); ++i) {
    INFO("array " << expected.arrays[i].name);
    REQUIRE(expected.arrays[i].name == actual.arrays[i].name);
    REQUIRE(expected.arrays[i].shape == actual.arrays[i].shape);
    // Bit for bit, doubles (NaN included) as well: they derive from the same integer sums.
    std::visit(
        [&](const auto& want) {
          using Vector = std::decay_t<decltype(want)>;
          const auto& got = std::get<Vector>(actual.arrays[i].data);
          REQUIRE(want.size() == got.size());
          CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(want[0])) == 0);
        },
        expected.arrays[i].data);
  }
}

inline void requireSameFacts(const ResultSet& expected, const ResultSet& actual) {
  for (const auto& [key, value] : expected.facts.entries()) {
    if (key == "running") continue;
    INFO("fact " << key);
    REQUIRE(actual.facts.contains(key));
    CHECK(formatParameter(actual.facts.at(key)) == formatParameter(value));
  }
}

inline void requireSameResults(const ResultSet& expected, const ResultSet& actual) {
  requireSameArrays(expected, actual);
  requireSameFacts(expected, actual);
}

}  // namespace tagflow::test
