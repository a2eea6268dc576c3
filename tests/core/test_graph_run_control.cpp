// Ending a run: the source ends, a duration is reached (cut exactly), requestStop(), or a node
// throws (the exception comes out of run()). Bad options and arguments are rejected.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

#include "support/probe.hpp"
#include "support/reference.hpp"
#include "support/sources.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"

using namespace tagflow;
using namespace tagflow::test;
using namespace std::chrono_literals;
using Catch::Contains;

namespace {

PatternSource::Config endless() {
  PatternSource::Config config;
  config.blocks = -1;
  config.block_ps = 1000;
  config.tags_per_block = 10;
  config.channels = {1, 2};
  return config;
}

}  // namespace

TEST_CASE("run(duration) cuts the stream exactly, inside a block", "[graph][run]") {
  const auto config = endless();
  PatternSource source(config);
  Probe probe("probe", Probe::Options{.keep_tags = true});
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(probe);
  const timestamp_t duration = 12'345;
  const Profile profile = graph.run(duration);
  CHECK(profile.stream_duration_ps == duration);
  CHECK(probe.getCaptureDuration() == duration);
  CHECK(probe.advances().back() == duration);
  const auto all = PatternSource::allTags(config, 13);
  std::vector<Tag> expected;
  for (const Tag& tag : all) {
    if (tag.time < duration) expected.push_back(tag);
  }
  CHECK(probe.tags() == expected);
  CHECK(profile.tags == expected.size());
  CHECK(profile.blocks == 13);
}

TEST_CASE("requestStop ends an endless run", "[graph][run]") {
  PatternSource source(endless());
  Probe probe("probe");
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(probe);
  auto run = graph.runAsync();
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (probe.advanceCount() < 100) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(100us);
  }
  graph.requestStop();
  REQUIRE(run.wait_for(60s) == std::future_status::ready);
  const Profile profile = run.get();
  CHECK(profile.blocks >= 100);
  CHECK(probe.advanceCount() == profile.blocks);
  CHECK(probe.tagCount() == profile.tags);
}

TEST_CASE("requestStop right after runAsync is not lost", "[graph][run]") {
  PatternSource source(endless());
  Probe probe("probe");
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(probe);
  auto run = graph.runAsync();
  graph.requestStop();
  REQUIRE(run.wait_for(60s) == std::future_status::ready);
  CHECK_NOTHROW(run.get());
}

TEST_CASE("A run cut inside a block leaves the rest of it to the next run", "[graph][run]") {
  // Blocks of 1000 ps with 10 tags; the cuts fall at 2345 and 2345 + 4321 ps.
  const PatternSource::Config config = endless();
  PatternSource source(config);
  Probe probe("probe", Probe::Options{.keep_tags = true});
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(probe);
  CHECK(graph.run(2345).stream_duration_ps == 2345);
  CHECK(graph.run(4321).stream_duration_ps == 4321);
  graph.run(10'000);
  std::vector<Tag> expected;
  for (const Tag& tag : PatternSource::allTags(config, 17)) {
    if (tag.time < 2345 + 4321 + 10'000) expected.push_back(tag);
  }
  CHECK(probe.tags() == expected);
  CHECK(probe.getCaptureDuration() == 2345 + 4321 + 10'000);
}

namespace {

// A Probe whose capture ends slowly: it says so, then waits, so that the run's end can be
// caught while the measurements are told that their stream ended.
class SlowEnd : public Probe {
 public:
  using Probe::Probe;
  std::promise<void> ending;

 protected:
  void onCaptureEnd() override {
    if (!said_) ending.set_value();
    said_ = true;
    std::this_thread::sleep_for(200ms);
  }

 private:
  bool said_ = false;
};

}  // namespace

TEST_CASE("A measurement added while a run ends joins the next run", "[graph][run]") {
  PatternSource source(endless());
  SlowEnd slow("slow");
  Probe late("late");
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(slow);
  auto running = graph.runAsync(20'000);
  slow.ending.get_future().wait();
  graph.add(late);  // the run's nodes are gone by now
  running.get();
  CHECK(late.tagCount() == 0);
  graph.run(10'000);
  CHECK(late.tagCount() == 100);
}

TEST_CASE("An exception in a measurement comes out of run()", "[graph][run]") {
  const int threads = GENERATE(1, 2);
  PatternSource source(endless());
  Probe healthy("healthy");
  Probe failing("failing", Probe::Options{.throw_at_advance = 50});
  MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 4, .threads = threads});
  graph.add(healthy);
  graph.add(failing);
  REQUIRE_THROWS_AS(graph.run(), std::runtime_error);
  CHECK(failing.advanceCount() == 50);
  // The run is over: a fresh run starts and can be cut normally.
  Probe after("after");
  MeasurementGraph second(source, GraphOptions{.threads = threads});
  second.add(after);
  CHECK(second.run(5000).stream_duration_ps == 5000);
}

TEST_CASE("The exception's message survives the trip through the graph", "[graph][run]") {
  PatternSource source(endless());
  Probe failing("failing", Probe::Options{.throw_at_advance = 7});
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(failing);
  REQUIRE_THROWS_WITH(graph.run(), Contains("probe 'failing' failed on purpose at advance 7"));
}

TEST_CASE("A source that breaks the block contract stops the run with DataError", "[graph][run]") {
  SECTION("a gap between blocks") {
    ScriptedSource source({{0, 100, {}}, {100, 200, {}}, {250, 300, {}}});
    Probe probe("probe");
    MeasurementGraph graph(source);
    graph.add(probe);
    REQUIRE_THROWS_AS(graph.run(), DataError);
  }
  SECTION("a tag outside its block") {
    ScriptedSource source({{0, 100, {makeTimeTag(1, 100)}}});
    Probe probe("probe");
    MeasurementGraph graph(source);
    graph.add(probe);
    REQUIRE_THROWS_WITH(graph.run(), Contains("outside") && Contains("[0, 100)"));
  }
  SECTION("a block that ends before it begins") {
    ScriptedSource source({{0, 100, {}}, {100, 50, {}}});
    Probe probe("probe");
    MeasurementGraph graph(source);
    graph.add(probe);
    REQUIRE_THROWS_WITH(graph.run(), Contains("ends at 50"));
  }
}

TEST_CASE("A source that fails ends the run after every block before it was processed",
          "[graph][run]") {
  // Twenty blocks, then the error; four in flight at most, so that blocks are queued behind
  // the measurements when it comes. Repeated: the blocks dropped depended on the timing.
  class FailingSource : public Source {
   public:
    bool next(BlockBuffer& out) override {
      if (served_ == 20) throw DataError("the source failed on purpose");
      out.storage.assign(100, makeTimeTag(1, 0));
      for (std::size_t i = 0; i < out.storage.size(); ++i) {
        out.storage[i].time = served_ * 1000 + static_cast<timestamp_t>(i);
      }
      out.publishStorage();
      out.begin_time = served_ * 1000;
      out.end_time = ++served_ * 1000;
      return true;
    }
    std::size_t maxBlockTags() const override { return 100; }
    std::string describe() const override { return "failing"; }

   private:
    timestamp_t served_ = 0;
  };
  const int threads = GENERATE(1, 2);
  for (int round = 0; round < 10; ++round) {
    FailingSource source;
    Probe slow("slow", Probe::Options{.sleep_per_block = 200us});
    Probe quick("quick");
    MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 4, .threads = threads});
    graph.add(slow);
    graph.add(quick);
    REQUIRE_THROWS_WITH(graph.run(), Contains("the source failed on purpose"));
    INFO("threads " << threads << ", round " << round);
    CHECK(slow.tagCount() == 2000);
    CHECK(quick.tagCount() == 2000);
  }
}

TEST_CASE("The graph rejects bad options and arguments", "[graph][run]") {
  PatternSource source(endless());
  REQUIRE_THROWS_AS(MeasurementGraph(source, GraphOptions{.max_blocks_in_flight = 0}),
                    InvalidArgument);
  REQUIRE_THROWS_WITH(MeasurementGraph(source, GraphOptions{.max_blocks_in_flight = 5000}),
                      Contains("5000"));
  REQUIRE_THROWS_WITH(MeasurementGraph(source, GraphOptions{.threads = -1}), Contains("-1"));
  REQUIRE_THROWS_WITH(MeasurementGraph(source, GraphOptions{.threads = 1025}),
                      Contains("threads 1025 is invalid (valid: 0 for all cores, or 1..1024)"));

  MeasurementGraph graph(source);
  REQUIRE_THROWS_WITH(graph.run(), Contains("no measurements"));
  Probe a("a");
  Probe also_a("a");
  graph.add(a);
  REQUIRE_THROWS_WITH(graph.add(a), Contains("'a'") && Contains("already"));
  REQUIRE_THROWS_WITH(graph.add(also_a), Contains("duplicate measurement name 'a'"));
  REQUIRE_THROWS_AS(graph.run(0), InvalidArgument);
  REQUIRE_THROWS_WITH(graph.run(-7), Contains("-7"));
  CHECK(graph.measurements().size() == 1);
}

TEST_CASE("A graph runs again and measurements keep their data", "[graph][run]") {
  PatternSource source(endless());
  Probe probe("probe");
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(probe);
  const Profile first = graph.run(50'000);
  const Profile second = graph.run(30'000);
  CHECK(first.stream_duration_ps == 50'000);
  CHECK(second.stream_duration_ps == 30'000);
  CHECK(probe.getCaptureDuration() == 80'000);
  CHECK(probe.tagCount() == first.tags + second.tags);
  CHECK(second.tags == 300);
}
