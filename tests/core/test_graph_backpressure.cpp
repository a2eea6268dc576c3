// Back-pressure: a slow measurement slows the source; the blocks handed out and not yet
// finished never exceed max_blocks_in_flight + 2 (the limiter's tokens, the one the input
// node holds back, and one being produced).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

#include "support/probe.hpp"
#include "support/sources.hpp"
#include "tagflow/core/measurement_graph.hpp"

using namespace tagflow;
using namespace tagflow::test;
using namespace std::chrono_literals;

TEST_CASE("A slow measurement bounds the blocks in flight", "[graph][backpressure]") {
  const std::size_t in_flight = GENERATE(1, 3, 6);
  const int threads = GENERATE(1, 2);
  PatternSource::Config config;
  config.blocks = 150;
  config.tags_per_block = 32;
  PatternSource pattern(config);
  Probe fast("fast");
  Probe slow("slow", Probe::Options{.sleep_per_block = 300us});
  CountingSource source(pattern,
                        [&] { return std::min(fast.advanceCount(), slow.advanceCount()); });
  MeasurementGraph graph(source,
                         GraphOptions{.max_blocks_in_flight = in_flight, .threads = threads});
  graph.add(fast);
  graph.add(slow);
  const Profile profile = graph.run();

  INFO("max_blocks_in_flight " << in_flight << ", threads " << threads);
  CHECK(source.produced() == 150);
  CHECK(slow.advanceCount() == 150);
  CHECK(profile.max_blocks_in_flight == in_flight);
  CHECK(source.maxOutstanding() <= in_flight + 2);
  // The source did run ahead of the slow measurement: the bound above is what held it back.
  if (threads > 1) CHECK(source.maxOutstanding() >= std::min<std::size_t>(in_flight, 2));
}
