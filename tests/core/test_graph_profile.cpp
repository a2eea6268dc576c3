// The engine's profile of a run: per node blocks and tags (every measurement sees what the
// source produced), busy shares that add up, the trace timeline, the printed table.
#include <catch2/catch.hpp>

#include <fstream>
#include <future>
#include <iterator>
#include <sstream>

#include "support/probe.hpp"
#include "support/sources.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"

using namespace tagflow;
using namespace tagflow::test;
using namespace std::chrono_literals;
using Catch::Contains;

TEST_CASE("Profile numbers agree with the stream and with each other", "[graph][profile]") {
  PatternSource::Config config;
  config.blocks = 500;
  config.block_ps = 2000;
  config.tags_per_block = 6;
  config.empty_every = 4;
  PatternSource source(config);
  Probe a("a");
  Probe b("b", Probe::Options{.sleep_per_block = 20us});
  Probe c("c");
  MeasurementGraph graph(
      source, GraphOptions{.max_blocks_in_flight = 5, .threads = 2, .max_trace_spans = 100});
  graph.add(a);
  graph.add(b);
  graph.add(c);
  const Profile profile = graph.run();

  const std::uint64_t stream_tags = PatternSource::allTags(config, config.blocks).size();
  REQUIRE(profile.nodes.size() == 4);
  CHECK(profile.nodes[0].name == "source");
  CHECK(profile.nodes[0].kind == "source");
  CHECK(profile.nodes[1].name == "a");
  CHECK(profile.nodes[2].name == "b");
  CHECK(profile.nodes[3].name == "c");
  CHECK(profile.nodes[2].kind == "Probe");
  CHECK(profile.tags == stream_tags);
  CHECK(profile.blocks == 500);
  CHECK(profile.threads == 2);
  CHECK(profile.max_blocks_in_flight == 5);
  CHECK(profile.stream_duration_ps == config.blocks * config.block_ps);
  double share_sum = 0;
  for (std::size_t i = 0; i < profile.nodes.size(); ++i) {
    const NodeProfile& node = profile.nodes[i];
    INFO(node.name);
    CHECK(node.tags == stream_tags);
    CHECK(node.blocks == 500);
    CHECK(node.busy_s >= 0);
    CHECK(node.wait_s >= 0);
    CHECK(node.busy_s <= profile.wall_s);
    REQUIRE(node.trace.size() == 100);
    for (std::size_t s = 1; s < node.trace.size(); ++s) {
      // Each node works on blocks one at a time, in order.
      CHECK(node.trace[s].sequence == node.trace[s - 1].sequence + 1);
      CHECK(node.trace[s].begin_us >= node.trace[s - 1].begin_us);
    }
    if (i > 0) share_sum += profile.share(node);
  }
  CHECK(share_sum == Approx(1.0).epsilon(1e-9));
  // The sleeping node is busy at least its sleeps.
  CHECK(profile.nodes[2].busy_s >= 500 * 20e-6);
  CHECK(profile.nodes[2].max_latency_s >= 20e-6);
  CHECK(profile.wallMTagsPerSecond() > 0);
  CHECK(profile.nodes[1].capacityMTagsPerSecond() > 0);
}

TEST_CASE("printProfile and writeChromeTrace write every node", "[graph][profile]") {
  PatternSource::Config config;
  config.blocks = 20;
  PatternSource source(config);
  Probe probe("my_probe");
  MeasurementGraph graph(source, GraphOptions{.threads = 1, .max_trace_spans = 8});
  graph.add(probe);
  const Profile profile = graph.run();

  std::ostringstream table;
  printProfile(table, profile);
  CHECK_THAT(table.str(), Contains("source") && Contains("my_probe") && Contains("Probe") &&
                              Contains(std::to_string(profile.tags)));

  TempDir dir;
  const std::string path = dir.file("trace.json");
  writeChromeTrace(path, profile);
  std::ifstream in(path);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(json, Contains("\"traceEvents\"") && Contains("my_probe (Probe)") &&
                       Contains("\"block 7\"") && !Contains("\"block 8\""));
  REQUIRE_THROWS_AS(writeChromeTrace(dir.file("missing/trace.json"), profile), IoError);
  REQUIRE_THROWS_WITH(writeChromeTrace(dir.file("missing/trace.json"), profile),
                      Contains("missing/trace.json"));
}

TEST_CASE("The live profile grows while the graph runs and is empty after", "[graph][profile]") {
  PatternSource::Config config;
  config.blocks = 400;
  config.block_ps = 1000;
  config.tags_per_block = 5;
  PatternSource source(config);
  Probe fast("fast");
  Probe slow("slow", Probe::Options{.sleep_per_block = 500us});
  MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 4, .threads = 2});
  graph.add(fast);
  graph.add(slow);
  CHECK(graph.liveProfile().nodes.empty());
  auto finished = graph.runAsync();

  std::uint64_t last_tags = 0;
  int snapshots_during_run = 0;
  while (finished.wait_for(20ms) == std::future_status::timeout) {
    const Profile live = graph.liveProfile();
    if (live.nodes.empty()) continue;  // the run has not registered yet
    ++snapshots_during_run;
    REQUIRE(live.nodes.size() == 3);
    CHECK(live.nodes[2].name == "slow");
    CHECK(live.tags >= last_tags);
    last_tags = live.tags;
    // Nobody finishes a block the source has not produced; back-pressure bounds the gap.
    CHECK(live.nodes[1].tags <= live.tags);
    CHECK(live.nodes[2].blocks <= live.blocks);
    CHECK(live.blocks_in_flight <= 4 + 2);
    CHECK(live.stream_duration_ps <= static_cast<timestamp_t>(config.blocks * config.block_ps));
    CHECK(live.wall_s > 0);
  }
  const Profile profile = finished.get();
  CHECK(snapshots_during_run >= 5);  // 400 blocks of 0.5 ms: about 0.2 s
  CHECK(last_tags <= profile.tags);
  CHECK(graph.liveProfile().nodes.empty());
}
