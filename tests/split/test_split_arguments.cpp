// Bad plans and merges get an error naming the value and what is valid.
#include <catch2/catch.hpp>

#include "split_kinds.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/sharded_measurement.hpp"
#include "tagflow/measurements/counter.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Matchers::Contains;

TEST_CASE("Kinds that cannot split say so", "[split]") {
  HistogramLogBins gated("gated", 3, 1, -10.0, -6.0, 50, ChannelGate{2, -1, false});
  CHECK_FALSE(gated.splitSupport().has_value());
  CHECK_THROWS_WITH(gated.setShardPlan(ShardPlan{}), Contains("'gated' cannot be split by time"));
  CHECK_THROWS_WITH(ShardedMeasurement(
                        [] {
                          return std::make_unique<HistogramLogBins>("gated", 3, 1, -10.0, -6.0, 50,
                                                                    ChannelGate{2, -1, false});
                        },
                        2),
                    Contains("cannot be split by time"));
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
