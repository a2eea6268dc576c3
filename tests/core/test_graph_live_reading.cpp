// Reading results while the graph runs: every read is a consistent snapshot at a block
// boundary, totals never go back, nothing crashes or races (run under TSan too).
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <thread>

#include "support/probe.hpp"
#include "support/sources.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"

using namespace tagflow;
using namespace tagflow::test;
using namespace std::chrono_literals;

TEST_CASE("Results can be read while the graph runs", "[graph][live]") {
  // Endless stream: every block of 1 us holds 16 tags, 8 on each of channels 1 and 2.
  PatternSource::Config config;
  config.blocks = -1;
  config.block_ps = 1'000'000;
  config.tags_per_block = 16;
  config.channels = {1, 2};
  PatternSource source(config);
  Probe probe("probe");
  Countrate countrate("countrate", {1, 2});
  Counter counter("counter", {1, 2}, 10 * config.block_ps, 50);
  MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 4, .threads = 2});
  graph.add(probe);
  graph.add(countrate);
  graph.add(counter);
  auto run = graph.runAsync();

  std::uint64_t polls = 0;
  std::uint64_t last_probe_tags = 0;
  std::int64_t last_countrate_total = 0;
  std::uint64_t last_bins = 0;
  std::uint64_t last_counter_total = 0;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (last_bins < 30 || polls < 50) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    ++polls;
    // One getResults() is one snapshot: data and capture duration belong together.
    const ResultSet probe_result = probe.getResults();
    const auto probe_tags =
        std::get<std::vector<std::uint64_t>>(probe_result.array("tag_count").data)[0];
    const std::int64_t probe_capture = probe_result.facts.getInt("capture_duration_ps");
    REQUIRE(probe_capture % config.block_ps == 0);  // a block boundary
    REQUIRE(probe_tags == static_cast<std::uint64_t>(probe_capture / config.block_ps * 16));
    REQUIRE(probe_tags >= last_probe_tags);
    last_probe_tags = probe_tags;

    const ResultSet rate_result = countrate.getResults();
    const auto totals = std::get<std::vector<std::int64_t>>(rate_result.array("counts_total").data);
    const std::int64_t rate_capture = rate_result.facts.getInt("capture_duration_ps");
    REQUIRE(totals[0] == rate_capture / config.block_ps * 8);
    REQUIRE(totals[1] == totals[0]);
    REQUIRE(totals[0] >= last_countrate_total);
    last_countrate_total = totals[0];
    const auto rates = countrate.getData();
    if (rate_capture > 0) REQUIRE(rates[0] == Approx(8e6).epsilon(1e-12));  // 8 per us

    const ResultSet counter_result = counter.getResults();
    const auto bins = static_cast<std::uint64_t>(counter_result.facts.getInt("bins_completed"));
    REQUIRE(bins >= last_bins);
    last_bins = bins;
    const auto counter_totals =
        std::get<std::vector<std::uint64_t>>(counter_result.array("data_total_counts").data);
    REQUIRE(counter_totals[0] >= last_counter_total);
    last_counter_total = counter_totals[0];
    const auto data = std::get<std::vector<std::int64_t>>(counter_result.array("data").data);
    REQUIRE(data.size() == 100);
    if (bins > 0) {
      REQUIRE(data[49] == 80);  // newest bin of channel 1: 10 blocks of 8 tags
      REQUIRE(data[99] == 80);
    }
    REQUIRE(counter.getData().size() == 100);  // the plain getter, concurrently too
    std::this_thread::sleep_for(100us);
  }
  graph.requestStop();
  REQUIRE(run.wait_for(60s) == std::future_status::ready);
  const Profile profile = run.get();
  CHECK(profile.tags == probe.tagCount());
  CHECK(probe.orderError().empty());
  CHECK(static_cast<std::uint64_t>(countrate.getCountsTotal()[0]) * 2 == profile.tags);
}
