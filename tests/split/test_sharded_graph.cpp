// Interleaved shards in a graph: a measurement run as 2, 3 or 7 shards over chunks of the
// stream (ShardedMeasurement) gives exactly the results of the same measurement run as one
// node, also with chunks barely longer than the margins; clear() reaches every shard.
#include <catch2/catch.hpp>

#include "split_kinds.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/sharded_measurement.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

ResultSet runAlone(const MeasurementFactory& make, const SyntheticConfig& config) {
  const std::unique_ptr<Measurement> measurement = make();
  SyntheticSource source(config);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(*measurement);
  graph.run();
  return measurement->getResults();
}

}  // namespace

TEST_CASE("A sharded measurement equals the same measurement as one node", "[split][graph]") {
  const int shards = GENERATE(2, 3, 7);
  const bool tight = GENERATE(false, true);
  const SyntheticConfig config = splitStreamConfig(17);
  for (const SplitKind& kind : anyOrderKinds()) {
    INFO(kind.label << ", " << shards << " shards" << (tight ? ", tight chunks" : ""));
    const SplitSupport margins = *kind.make()->splitSupport();
    REQUIRE(margins.any_order);
    const timestamp_t chunk =
        tight ? std::max<timestamp_t>(margins.before + margins.after, 1) + 999 : 0;
    SyntheticSource source(config);
    MeasurementGraph graph(source, GraphOptions{.threads = 2});
    auto& sharded = graph.emplace<ShardedMeasurement>(kind.make, shards, chunk);
    const Profile profile = graph.run();
    CHECK(sharded.graphNodes().size() == static_cast<std::size_t>(shards));
    CHECK(profile.nodes.size() == static_cast<std::size_t>(shards) + 1);  // the source too
    const ResultSet results = sharded.getResults();
    CHECK(results.facts.getInt("parallel") == shards);
    requireSameResults(runAlone(kind.make, config), results);
  }
}

TEST_CASE("Clearing a sharded measurement clears every shard", "[split][graph]") {
  const SyntheticConfig config = splitStreamConfig(2);
  SyntheticSource source(config);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  auto& sharded = graph.emplace<ShardedMeasurement>(anyOrderKinds().front().make, 3);
  graph.run();
  REQUIRE(sharded.getCaptureDuration() == config.duration_ps);
  sharded.clear();
  CHECK(sharded.getCaptureDuration() == 0);
  const auto counts = sharded.mergedAs<Countrate>()->getCountsTotal();
  CHECK(std::all_of(counts.begin(), counts.end(), [](std::int64_t c) { return c == 0; }));
}

TEST_CASE("Shards with margins near the range of times neither double-count nor hang",
          "[split][graph]") {
  // A Correlation window of 2^52 ps and a HistogramLogBins span of 10^16 ps: 32 times the
  // margins, times a chunk number, passes 2^63 for a shard count that needs more chunks than
  // fit. Every shard count must still give one pass's results, and finish.
  const SyntheticConfig config = mixedConfig(2'000'000'000, 4096, 1.0, 5);  // 2 ms
  const MeasurementFactory kinds[] = {
      [] { return std::make_unique<Correlation>("wide", 2, 1, timestamp_t{1} << 42, 1024); },
      [] { return std::make_unique<HistogramLogBins>("long", 2, 1, -12, 4, 100); },
      [] { return std::make_unique<HistogramLogBins>("longest", 2, 1, -12, 6, 100); }};
  for (const MeasurementFactory& make : kinds) {
    const ResultSet alone = runAlone(make, config);
    // 29 and 65 shards counted twice before, 128 never ended.
    for (const int shards : {29, 65, 128}) {
      INFO(make()->name() << ", " << shards << " shards");
      SyntheticSource source(config);
      MeasurementGraph graph(source, GraphOptions{.threads = 2});
      auto& sharded = graph.emplace<ShardedMeasurement>(make, shards);
      graph.run();
      const ResultSet results = sharded.getResults();
      CHECK(results.facts.getInt("capture_duration_ps") == config.duration_ps);
      requireSameResults(alone, results);
    }
  }
}
