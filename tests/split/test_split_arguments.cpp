// Bad plans and merges get an error naming the value and what is valid.
#include <catch2/catch.hpp>

#include "split_kinds.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/sharded_measurement.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/phase_noise.hpp"
#include "tagflow/measurements/tag_stream.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Matchers::Contains;

TEST_CASE("Kinds that cannot split say so", "[split]") {
  // A copy of the tags as they come: there is nothing to merge.
  TagStream stream("stream", {1});
  CHECK_FALSE(stream.splitSupport().has_value());
  CHECK_THROWS_WITH(stream.setShardPlan(ShardPlan{}), Contains("'stream' cannot be split by time"));
  CHECK_THROWS_WITH(
      ShardedMeasurement(
          [] { return std::make_unique<TagStream>("stream", std::vector<channel_t>{1}); }, 2),
      Contains("cannot be split by time"));
}

TEST_CASE("A gated histogram splits only into consecutive ranges, merged from the first",
          "[split]") {
  const auto make = [] {
    return std::make_unique<HistogramLogBins>("gated", 3, 1, -10.0, -6.0, 50,
                                              ChannelGate{2, -1, false});
  };
  const SplitSupport support = *make()->splitSupport();
  CHECK_FALSE(support.any_order);
  CHECK_THROWS_WITH(ShardedMeasurement(make, 2), Contains("merge only in time order"));
  // A later range follows both states of the gate at its start; it cannot take the range
  // after it, as it does not know which of its own counts hold.
  DrainedStream stream = drainSynthetic(splitStreamConfig(3));
  const timestamp_t cut = stream.begin() + 7'000'000'000;
  const auto later = make();
  later->setShardPlan(
      ShardPlan{.begin = cut, .end = cut + 1'000'000'000, .origin = stream.begin()});
  feed(*later, stream, cut - support.before, cut + 1'000'000'000);
  const ResultSet state = later->getPartialState();
  CHECK(state.array("gates").shape == std::vector<std::size_t>{2, 4});
  const auto last = make();
  last->setShardPlan(ShardPlan{.begin = cut + 1'000'000'000, .origin = stream.begin()});
  CHECK_THROWS_WITH(later->mergePartialState(last->getPartialState()),
                    Contains("merge in time order into the first range's histogram"));
}

TEST_CASE("Clock measurements split only into consecutive ranges", "[split]") {
  // A range is a series of its own: chunks of interleaved shards would restart it every chunk.
  for (const MeasurementFactory& make : std::vector<MeasurementFactory>{
           [] {
             return std::make_unique<FrequencyStability>("f", 2, std::vector<std::int64_t>{1, 2},
                                                         10);
           },
           [] { return std::make_unique<PhaseNoise>("p", std::vector<channel_t>{2}); }}) {
    const std::optional<SplitSupport> support = make()->splitSupport();
    REQUIRE(support.has_value());
    CHECK_FALSE(support->any_order);
    CHECK(support->before == 0);
    CHECK(support->after == 0);
    CHECK_THROWS_WITH(ShardedMeasurement(make, 2), Contains("merge only in time order"));
  }
  // A partial state from other code: sizes are checked before anything changes.
  FrequencyStability stability("f", 2, {1, 2}, 10, 5);
  ResultSet state = stability.getPartialState();
  std::get<std::vector<double>>(state.arrays.front().data).pop_back();
  CHECK_THROWS_WITH(stability.mergePartialState(state), Contains("allan_sums"));
  PhaseNoise noise("p", {2, 3});
  ResultSet spectra = noise.getPartialState();
  std::get<std::vector<std::int64_t>>(spectra.arrays.front().data)[1] = 41;
  CHECK_THROWS_WITH(noise.mergePartialState(spectra),
                    Contains("41 octave stages (valid: 0 to 40)"));
}

TEST_CASE("Counter splits into consecutive ranges on the bin grid of one pass", "[split]") {
  CHECK_THROWS_WITH(
      ShardedMeasurement([] { return std::make_unique<Counter>("c", std::vector<channel_t>{1}); },
                         2),
      Contains("merge only in time order"));

  // Bins of 100 ps from 0; ranges cut at 450 and 700.
  DrainedStream stream;
  for (timestamp_t begin = 0; begin < 1000; begin += 250) {
    stream.blocks.push_back({begin, begin + 250, {Tag{.channel = 1, .time = begin + 10}}});
  }
  const auto make = [] {
    return std::make_unique<Counter>("c", std::vector<channel_t>{1}, 100, 10);
  };
  const auto shard = [&](ShardPlan plan) {
    auto counter = make();
    counter->setShardPlan(plan);
    feed(*counter, stream, plan.begin, plan.end);
    return counter;
  };
  const ResultSet second =
      shard(ShardPlan{.begin = 450, .end = 700, .origin = 0})->getPartialState();
  const ResultSet third = shard(ShardPlan{.begin = 700, .origin = 0})->getPartialState();
  // Without the origin a later range bins from its own begin, off the grid.
  CHECK_THROWS_WITH(
      shard(ShardPlan{.end = 450})
          ->mergePartialState(shard(ShardPlan{.begin = 450, .end = 700})->getPartialState()),
      Contains("the later range's bins begin at 450 ps, this range's integrating bin at 400 ps"));
  CHECK_THROWS_WITH(shard(ShardPlan{.end = 450})->mergePartialState(third),
                    Contains("the later range begins at 700 ps, this one ends at 450 ps"));

  const auto merged = shard(ShardPlan{.end = 450});
  merged->mergePartialState(second);
  merged->mergePartialState(third);
  const auto whole = make();
  feed(*whole, stream);
  CHECK(whole->getData() == std::vector<std::int64_t>{1, 0, 1, 0, 0, 1, 0, 1, 0, 0});
  CHECK(merged->getData() == whole->getData());
  CHECK(merged->getBinsCompleted() == 10);
}

TEST_CASE("A shard plan must name a shard, a non-empty range and chunks wider than the margins",
          "[split]") {
  Correlation correlation("c", 1, 2, 1000, 100);  // margins 50 ns before and after
  CHECK_THROWS_WITH(correlation.setShardPlan(ShardPlan{.chunk = 1'000'000, .index = 2, .count = 2}),
                    Contains("shard 2 of 2 is invalid (valid: 0 <= index < count)"));
  CHECK_THROWS_WITH(correlation.setShardPlan(ShardPlan{.begin = 10, .end = 10}),
                    Contains("[10, 10) ps is empty"));
  CHECK_THROWS_WITH(correlation.setShardPlan(ShardPlan{.chunk = 99'999, .index = 0, .count = 2}),
                    Contains("chunk 99999 ps is invalid (valid: >= 100000 ps"));
  CHECK_THROWS_WITH(
      ShardedMeasurement([] { return std::make_unique<Correlation>("c", 1, 2, 1000, 100); }, 0),
      Contains("parallel 0 is invalid (valid: 1 to 256)"));
}

TEST_CASE("A partial state merges only into the same kind with the same parameters", "[split]") {
  Correlation narrow("c", 1, 2, 1000, 100);
  Correlation wide("c", 1, 2, 1000, 200);
  Countrate rate("c", {1, 2});
  CHECK_THROWS_WITH(narrow.mergePartialState(wide.getPartialState()),
                    Contains("same kind and parameters"));
  CHECK_THROWS_WITH(narrow.mergePartialState(rate.getPartialState()),
                    Contains("cannot merge the partial state of Countrate 'c'"));
}
