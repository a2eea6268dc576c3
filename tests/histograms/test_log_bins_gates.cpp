// HistogramLogBins gates (docs/measurements.md, HistogramLogBins): a click (start) counts only
// while its gate is open; an event on a gate channel is judged with the gate's state before it
// (an event that closes its own gate still counts, one that opens it does not); gates return
// to their initial state when the exposure restarts; the accumulation times are the
// warm-up-excluded capture times with the gate open, and g2 = T_start / (w N_start N_click).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "support/generators.hpp"
#include "support/pairs.hpp"
#include "support/reference.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

// Start channel 1, click channel 2; edges 1, 10, 100, 1000 ps; clicks count from 1000 ps on.
struct Run {
  std::vector<std::uint64_t> counts;
  std::int64_t n_start, n_click;
  timestamp_t accumulation_start, accumulation_click;
};

Run runGated(const std::vector<Tag>& tags, std::optional<ChannelGate> click_gate,
             std::optional<ChannelGate> start_gate, timestamp_t end) {
  HistogramLogBins histogram("h", 2, 1, -12, -9, 3, click_gate, start_gate);
  runMemory(tags, 2, 0, end, {&histogram});
  const auto ref =
      logBinsReference(tags, 2, 1, histogram.getBinEdges(), 0, end, click_gate, start_gate);
  const ResultSet results = histogram.getResults();
  const Run run{histogram.getData(), results.facts.getInt("n_start"),
                results.facts.getInt("n_click"), histogram.getAccumulationTimeStart(),
                histogram.getAccumulationTimeClick()};
  CHECK(run.counts == ref.counts);
  CHECK(run.n_start == static_cast<std::int64_t>(ref.n_start));
  CHECK(run.n_click == static_cast<std::int64_t>(ref.n_click));
  CHECK(run.accumulation_start == ref.accumulation_start);
  CHECK(run.accumulation_click == ref.accumulation_click);
  return run;
}

Tag special(TagType type, timestamp_t time) {
  return Tag{type, 0, 0, 0, time};
}

}  // namespace

TEST_CASE("HistogramLogBins counts clicks only while the click gate is open", "[log_bins][gates]") {
  const std::vector<Tag> tags{makeTimeTag(1, 2000), makeTimeTag(2, 2010),   // closed
                              makeTimeTag(3, 2020), makeTimeTag(2, 2030),   // open: tau 30
                              makeTimeTag(4, 2040), makeTimeTag(2, 2050),   // closed
                              makeTimeTag(3, 2060), makeTimeTag(2, 2100)};  // open: tau 100
  const Run run = runGated(tags, ChannelGate{3, 4, false}, std::nullopt, 3000);
  CHECK(run.counts == std::vector<std::uint64_t>{0, 1, 1});
  CHECK(run.n_click == 2);
  CHECK(run.n_start == 1);
  CHECK(run.accumulation_click == 20 + 940);  // [2020, 2040) and [2060, 3000)
  CHECK(run.accumulation_start == 2000);      // [1000, 3000): no start gate

  // Initially open: the click at 2010 counts too, and the gate is open from the warm-up's end.
  const Run open = runGated(tags, ChannelGate{3, 4, true}, std::nullopt, 3000);
  CHECK(open.counts == std::vector<std::uint64_t>{0, 2, 1});
  CHECK(open.accumulation_click == 1040 + 940);  // [1000, 2040) and [2060, 3000)
}

TEST_CASE("HistogramLogBins judges an event on a gate channel by the state before it",
          "[log_bins][gates]") {
  SECTION("a click that opens its own gate does not count") {
    const std::vector<Tag> tags{makeTimeTag(1, 2000), makeTimeTag(2, 2010),  // opens
                                makeTimeTag(2, 2020),                        // tau 20
                                makeTimeTag(4, 2030), makeTimeTag(2, 2040),  // opens
                                makeTimeTag(2, 2050)};                       // tau 50
    const Run run = runGated(tags, ChannelGate{2, 4, false}, std::nullopt, 3000);
    CHECK(run.counts == std::vector<std::uint64_t>{0, 2, 0});
    CHECK(run.n_click == 2);
  }
  SECTION("a click that closes its own gate counts") {
    const std::vector<Tag> tags{makeTimeTag(1, 2000), makeTimeTag(2, 2010),   // tau 10, closes
                                makeTimeTag(2, 2020),                         // closed
                                makeTimeTag(3, 2030), makeTimeTag(2, 2040)};  // tau 40, closes
    const Run run = runGated(tags, ChannelGate{3, 2, true}, std::nullopt, 3000);
    CHECK(run.counts == std::vector<std::uint64_t>{0, 2, 0});
    CHECK(run.accumulation_click == 1010 + 10);  // [1000, 2010) and [2030, 2040)
  }
  SECTION("a start outside its gate is no start") {
    const std::vector<Tag> tags{makeTimeTag(1, 2000),                        // closed: not a start
                                makeTimeTag(5, 2005), makeTimeTag(1, 2010),  // a start
                                makeTimeTag(6, 2015), makeTimeTag(1, 2020),  // not a start
                                makeTimeTag(2, 2100)};                       // tau 90 only
    const Run run = runGated(tags, std::nullopt, ChannelGate{5, 6, false}, 3000);
    CHECK(run.counts == std::vector<std::uint64_t>{0, 1, 0});
    CHECK(run.n_start == 1);
    CHECK(run.accumulation_start == 10);    // [2005, 2015)
    CHECK(run.accumulation_click == 2000);  // no click gate
  }
  SECTION("a start that closes its own gate is a start") {
    const std::vector<Tag> tags{makeTimeTag(1, 2000),   // a start, closes
                                makeTimeTag(1, 2010),   // not a start
                                makeTimeTag(2, 2100)};  // tau 100 only
    const Run run = runGated(tags, std::nullopt, ChannelGate{5, 1, true}, 3000);
    CHECK(run.counts == std::vector<std::uint64_t>{0, 0, 1});
    CHECK(run.n_start == 1);
  }
}

TEST_CASE("HistogramLogBins gates return to their initial state when the exposure restarts",
          "[log_bins][gates]") {
  const std::vector<Tag> tags{makeTimeTag(3, 1500),
                              makeTimeTag(1, 1800),
                              makeTimeTag(2, 2000),           // tau 200
                              special(TagType::Error, 2500),  // gate closed again
                              makeTimeTag(1, 3600),
                              makeTimeTag(2, 3700),  // closed
                              makeTimeTag(3, 3800),
                              makeTimeTag(2, 3900),  // tau 300
                              special(TagType::OverflowBegin, 4000),
                              makeTimeTag(3, 4100),  // inside the overflow
                              special(TagType::OverflowEnd, 4200),
                              makeTimeTag(1, 5300),
                              makeTimeTag(2, 5400)};  // closed
  const Run run = runGated(tags, ChannelGate{3, 4, false}, std::nullopt, 6000);
  CHECK(run.counts == std::vector<std::uint64_t>{0, 0, 2});
  CHECK(run.n_click == 2);
  CHECK(run.accumulation_click == 1000 + 200);        // [1500, 2500) and [3800, 4000)
  CHECK(run.accumulation_start == 1500 + 500 + 800);  // [1000,2500) [3500,4000) [5200,6000)
}

TEST_CASE("Gated HistogramLogBins in a random stream equals the brute force",
          "[log_bins][gates][reference]") {
  struct Case {
    std::optional<ChannelGate> click_gate, start_gate;
    channel_t click, start;
  };
  const Case c = GENERATE(values<Case>({
      {ChannelGate{3, 4, false}, std::nullopt, 2, 1},
      {std::nullopt, ChannelGate{5, 6, true}, 2, 1},
      {ChannelGate{3, 4, true}, ChannelGate{5, 6, false}, 2, 1},
      {ChannelGate{3, 4, false}, ChannelGate{3, 4, false}, 2, 1},  // one gate for both
      {ChannelGate{2, 4, false}, ChannelGate{6, 1, true}, 2, 1},   // events on gate channels
      {ChannelGate{3, 4, false}, ChannelGate{5, 6, false}, 1, 1},  // auto mode
  }));
  constexpr timestamp_t kEnd = 40'000'000;
  std::vector<Tag> tags = randomTags(101, {1, 2}, 0, kEnd, 1000.0);
  const std::vector<Tag> gates = randomTags(102, {3, 4, 5, 6}, 0, kEnd, 20'000.0);
  tags.insert(tags.end(), gates.begin(), gates.end());
  tags = withOverflow(tags, 10'000'000, 10'050'000);
  std::mt19937_64 random(103);
  std::uniform_int_distribution<timestamp_t> when(1, kEnd - 1);
  for (int i = 0; i < 4; ++i) tags.push_back(special(TagType::Error, when(random)));
  sortStream(tags);

  HistogramLogBins histogram("h", c.click, c.start, -11, -8, 30, c.click_gate, c.start_gate);
  runScripted(cutIntoBlocks(tags, 0, kEnd, 104, 0.05, 0.3), {&histogram});
  const auto& edges = histogram.getBinEdges();
  const auto ref =
      logBinsReference(tags, c.click, c.start, edges, 0, kEnd, c.click_gate, c.start_gate);
  std::uint64_t pairs = 0;
  for (auto n : ref.counts) pairs += n;
  REQUIRE(pairs > 1000);
  // The gates matter: one of them is closed for a good part of the capture.
  REQUIRE(std::min(ref.accumulation_click, ref.accumulation_start) < kEnd / 2 + kEnd / 4);
  CHECK(histogram.getData() == ref.counts);
  const ResultSet results = histogram.getResults();
  CHECK(results.facts.getInt("n_start") == static_cast<std::int64_t>(ref.n_start));
  CHECK(results.facts.getInt("n_click") == static_cast<std::int64_t>(ref.n_click));
  CHECK(results.facts.getInt("accumulation_time_start") == ref.accumulation_start);
  CHECK(results.facts.getInt("accumulation_time_click") == ref.accumulation_click);

  // g2 = T_start / (w_i * N_start * N_click) * counts_i; counts per ps = counts_i / w_i.
  std::vector<double> per_ps, g2;
  for (std::size_t i = 0; i < ref.counts.size(); ++i) {
    const double width = static_cast<double>(edges[i + 1] - edges[i]);
    per_ps.push_back(static_cast<double>(ref.counts[i]) / width);
    g2.push_back(static_cast<double>(ref.accumulation_start) /
                 (width * static_cast<double>(ref.n_start) * static_cast<double>(ref.n_click)) *
                 static_cast<double>(ref.counts[i]));
  }
  CHECK(sameValues(histogram.getDataNormalizedCountsPerPs(), per_ps, 1e-12));
  CHECK(sameValues(histogram.getDataNormalizedG2(), g2, 1e-12));
}
