// MeasurementGraph delivers every block to every measurement exactly once and in order,
// while several measurements work on different cores (DESIGN.md, "The graph").
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <vector>

#include "support/probe.hpp"
#include "support/sources.hpp"
#include "tagflow/core/measurement_graph.hpp"

using namespace tagflow;
using namespace tagflow::test;
using namespace std::chrono_literals;

TEST_CASE("Every measurement sees every block once, in order", "[graph]") {
  const int threads = GENERATE(1, 2);
  const std::size_t in_flight = GENERATE(1, 4);
  PatternSource::Config config;
  config.blocks = 3000;
  config.block_ps = 1000;
  config.tags_per_block = 4;
  config.channels = {1, -1, 7};
  config.empty_every = 7;
  PatternSource source(config);

  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<Probe>("plain"));
  probes.push_back(std::make_unique<Probe>("keeper", Probe::Options{.keep_tags = true}));
  probes.push_back(std::make_unique<Probe>("sleeper", Probe::Options{.sleep_per_block = 10us}));
  probes.push_back(std::make_unique<Probe>("keeper2", Probe::Options{.keep_tags = true}));
  MeasurementGraph graph(source,
                         GraphOptions{.max_blocks_in_flight = in_flight, .threads = threads});
  for (auto& probe : probes) graph.add(*probe);
  const Profile profile = graph.run();

  // advanceTime() runs once at the end of each block here (no special tags): its log is the
  // sequence of block ends, which tiles [0, blocks * block_ps) only if every block came once
  // and in order.
  std::vector<timestamp_t> block_ends;
  for (std::int64_t i = 0; i < config.blocks; ++i) block_ends.push_back((i + 1) * config.block_ps);
  const auto all_tags = PatternSource::allTags(config, config.blocks);
  INFO("threads " << threads << " in flight " << in_flight);
  CHECK(profile.blocks == static_cast<std::uint64_t>(config.blocks));
  for (const auto& probe : probes) {
    INFO(probe->name());
    CHECK(probe->orderError().empty());
    CHECK(probe->advances() == block_ends);
    CHECK(probe->tagCount() == all_tags.size());
    REQUIRE(probe->captureStarts().size() == 1);
    CHECK(probe->captureStarts()[0].time == 0);
    CHECK(probe->getCaptureDuration() == config.blocks * config.block_ps);
  }
  CHECK(probes[1]->tags() == all_tags);
  CHECK(probes[3]->tags() == all_tags);
}

TEST_CASE("Special tags inside blocks reach every measurement in stream order", "[graph]") {
  std::vector<DrainedBlock> blocks;
  std::vector<Tag> specials;
  for (timestamp_t i = 0; i < 400; ++i) {
    DrainedBlock block{i * 100, (i + 1) * 100, {makeTimeTag(1, i * 100 + 10)}};
    if (i % 3 == 0) {
      block.tags.push_back(Tag{TagType::OverflowBegin, 0, 0, 0, i * 100 + 20});
      block.tags.push_back(Tag{TagType::MissedEvents, 0, 3, 1, i * 100 + 30});
      block.tags.push_back(Tag{TagType::OverflowEnd, 0, 0, 0, i * 100 + 30});
      specials.insert(specials.end(), block.tags.begin() + 1, block.tags.end());
    }
    block.tags.push_back(makeTimeTag(2, i * 100 + 40));
    blocks.push_back(block);
  }
  ScriptedSource source(blocks);
  Probe first("first");
  Probe second("second", Probe::Options{.sleep_per_block = 5us});
  MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 3, .threads = 2});
  graph.add(first);
  graph.add(second);
  graph.run();
  for (const Probe* probe : {&first, &second}) {
    CHECK(probe->specials() == specials);
    CHECK(probe->tagCount() == 800);
    CHECK(probe->getOverflowCount() == 134);
    CHECK(probe->orderError().empty());
  }
}
