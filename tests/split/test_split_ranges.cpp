// Consecutive ranges: a stream cut at 1, 2 and 6 points (random times, on a tag, inside a pair
// window, on an overflow's begin, inside an overflow) and counted range by range, each shard
// fed only the blocks around its range, then merged in order, gives exactly the results of one
// pass, for every splittable kind.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "split_kinds.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

// `count` cut points inside the stream; the first few land on awkward places.
std::vector<timestamp_t> cutPoints(const DrainedStream& stream, const SyntheticConfig& config,
                                   int count, std::mt19937_64& random) {
  const auto& tags = stream.tags;
  std::uniform_int_distribution<std::size_t> any_tag(1, tags.size() - 2);
  const timestamp_t overflow_begin = config.overflows.front().begin_ps;
  const std::vector<timestamp_t> awkward{
      tags[any_tag(random)].time,        // on a tag
      tags[any_tag(random)].time + 700,  // inside a pair window
      overflow_begin,                    // on an overflow's begin
      overflow_begin + 100'000'000,      // inside an overflow
      config.overflows.back().end_ps,    // on an overflow's end
      tags[any_tag(random)].time + 1,    // just after a tag
  };
  std::vector<timestamp_t> cuts;
  std::uniform_int_distribution<timestamp_t> any_time(stream.begin() + 1, stream.end() - 1);
  for (int i = 0; i < count; ++i) {
    cuts.push_back(i < static_cast<int>(awkward.size()) && random() % 4 != 0 ? awkward[i]
                                                                             : any_time(random));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

}  // namespace

TEST_CASE("Consecutive time ranges merged in order equal one pass", "[split]") {
  const std::uint64_t seed = GENERATE(3, 11);
  const int ranges = GENERATE(2, 3, 7);
  const SyntheticConfig config = splitStreamConfig(seed);
  const DrainedStream stream = drainSynthetic(config);
  std::mt19937_64 random(seed * 1000 + static_cast<std::uint64_t>(ranges));
  const std::vector<timestamp_t> cuts = cutPoints(stream, config, ranges - 1, random);

  for (const SplitKind& kind : splitKinds()) {
    INFO(kind.label << ", " << ranges << " ranges, seed " << seed);
    const auto whole = kind.make();
    feed(*whole, stream);

    std::vector<timestamp_t> bounds{stream.begin()};
    bounds.insert(bounds.end(), cuts.begin(), cuts.end());
    bounds.push_back(stream.end());
    const auto merged = kind.make();
    for (std::size_t r = 0; r + 1 < bounds.size(); ++r) {
      const auto shard = kind.make();
      shard->setShardPlan(ShardPlan{.begin = bounds[r], .end = bounds[r + 1]});
      const SplitSupport margins = *shard->splitSupport();
      feed(*shard, stream, bounds[r] - margins.before, bounds[r + 1] + margins.after);
      merged->mergePartialState(shard->getPartialState());
    }
    requireSameResults(whole->getResults(), merged->getResults());
  }
}

TEST_CASE("Ranges merge into the measurement of the first range as well", "[split]") {
  const SyntheticConfig config = splitStreamConfig(5);
  const DrainedStream stream = drainSynthetic(config);
  const timestamp_t cut = (stream.begin() + stream.end()) / 2 + 12'345;
  for (const SplitKind& kind : splitKinds()) {
    INFO(kind.label);
    const auto whole = kind.make();
    feed(*whole, stream);
    const auto first = kind.make();
    first->setShardPlan(ShardPlan{.end = cut});
    feed(*first, stream, stream.begin(), cut + first->splitSupport()->after);
    const auto second = kind.make();
    second->setShardPlan(ShardPlan{.begin = cut});
    feed(*second, stream, cut - second->splitSupport()->before);
    first->mergePartialState(second->getPartialState());
    requireSameResults(whole->getResults(), first->getResults());
  }
}
