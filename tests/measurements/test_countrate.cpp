// Countrate against brute-force counts (spec 3.2): rate = total counts / capture duration,
// MissedEvents included, NaN while nothing was captured, start() keeps totals, startFor cut.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "support/probe.hpp"
#include "support/reference.hpp"
#include "support/synthetic.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/countrate.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

void requireRates(const Countrate& countrate, const std::vector<std::uint64_t>& counts,
                  timestamp_t duration_ps) {
  const auto totals = countrate.getCountsTotal();
  const auto rates = countrate.getData();
  REQUIRE(totals.size() == counts.size());
  for (std::size_t c = 0; c < counts.size(); ++c) {
    INFO("channel slot " << c);
    CHECK(totals[c] == static_cast<std::int64_t>(counts[c]));
    CHECK(
        rates[c] ==
        Approx(static_cast<double>(counts[c]) / (duration_ps * 1e-12)).epsilon(1e-12).margin(1e-9));
  }
}

}  // namespace

TEST_CASE("Countrate matches brute-force counts on a synthetic stream", "[countrate]") {
  const auto config = mixedConfig(10'000'000'000, 999);
  const DrainedStream stream = drainSynthetic(config);
  SyntheticSource source(config);
  const std::vector<channel_t> channels{-1, 3, 2, 1, 9};
  Countrate countrate("countrate", channels);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(countrate);
  graph.run();
  std::vector<std::uint64_t> counts;
  for (channel_t channel : channels) {
    counts.push_back(countTimeTags(stream.tags, channel, stream.begin(), stream.end()));
  }
  CHECK(counts[3] > 40'000);
  CHECK(counts[4] == 0);
  CHECK(countrate.getCaptureDuration() == stream.end() - stream.begin());
  requireRates(countrate, counts, stream.end() - stream.begin());
}

TEST_CASE("Countrate includes missed events: its totals equal the counts without overflow",
          "[countrate][overflow]") {
  SyntheticConfig config = mixedConfig(4'000'000'000, 512, 1.0, 99);
  config.overflows = {{300'000'000, 900'000'000}, {2'000'000'000, 2'000'000'500}};
  SyntheticConfig clean = config;
  clean.overflows.clear();
  const DrainedStream lossy = drainSynthetic(config);
  const DrainedStream full = drainSynthetic(clean);
  REQUIRE(countMissed(lossy.tags, 1, 0, lossy.end()) > 1000);

  SyntheticSource source(config);
  const std::vector<channel_t> channels{1, 2, 3, -1};
  Countrate countrate("countrate", channels);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(countrate);
  graph.run();
  std::vector<std::uint64_t> counts;
  for (channel_t channel : channels) {
    counts.push_back(countTimeTags(full.tags, channel, 0, full.end()));
  }
  requireRates(countrate, counts, full.end());
}

TEST_CASE("Countrate is NaN until something was captured", "[countrate]") {
  Countrate countrate("countrate", {1, 2});
  auto rates = countrate.getData();
  CHECK(std::isnan(rates[0]));
  CHECK(std::isnan(rates[1]));
  CHECK(countrate.getCountsTotal() == std::vector<std::int64_t>{0, 0});
  BlockFeeder feed(countrate);
  feed.feed(0, 1'000'000, {makeTimeTag(1, 5), makeTimeTag(1, 6), makeTimeTag(2, 7)});
  rates = countrate.getData();
  CHECK(rates[0] == Approx(2e6));
  CHECK(rates[1] == Approx(1e6));
  countrate.clear();
  CHECK(std::isnan(countrate.getData()[0]));
  CHECK(countrate.getCountsTotal() == std::vector<std::int64_t>{0, 0});
}

TEST_CASE("Countrate start() after stop() keeps the totals", "[countrate]") {
  Countrate countrate("countrate", {1});
  BlockFeeder feed(countrate);
  const auto tags = randomTags(3, {1, 2}, 0, 30'000, 40);
  const auto slice = [&](timestamp_t from, timestamp_t to) {
    std::vector<Tag> out;
    for (const Tag& tag : tags) {
      if (tag.time >= from && tag.time < to) out.push_back(tag);
    }
    return out;
  };
  feed.feed(0, 10'000, slice(0, 10'000));
  countrate.stop();
  feed.feed(10'000, 20'000, slice(10'000, 20'000));
  countrate.start();
  feed.feed(20'000, 30'000, slice(20'000, 30'000));
  const std::uint64_t expected =
      countTimeTags(tags, 1, 0, 10'000) + countTimeTags(tags, 1, 20'000, 30'000);
  CHECK(countrate.getCaptureDuration() == 20'000);
  requireRates(countrate, {expected}, 20'000);
}

TEST_CASE("Countrate startFor counts exactly its duration", "[countrate]") {
  const auto tags = std::make_shared<const std::vector<Tag>>(
      randomTags(8, {1, 2, 3}, 1'000'000, 50'000'000, 3000));
  MemorySource source(tags, 500);
  const DrainedStream stream = [&] {
    MemorySource copy(tags, 500);
    return drain(copy);
  }();
  const timestamp_t duration = 17'777'777;
  REQUIRE(blocksStraddling(stream, stream.begin() + duration) == 1);
  Countrate countrate("countrate", {3, 1});
  countrate.startFor(duration);
  MeasurementGraph graph(source);
  graph.add(countrate);
  graph.run();
  CHECK_FALSE(countrate.isRunning());
  CHECK(countrate.getCaptureDuration() == duration);
  requireRates(countrate,
               {countTimeTags(*tags, 3, stream.begin(), stream.begin() + duration),
                countTimeTags(*tags, 1, stream.begin(), stream.begin() + duration)},
               duration);
}

TEST_CASE("Countrate rejects bad channel lists", "[countrate]") {
  REQUIRE_THROWS_AS(Countrate("rate", {2, 5, 2}), InvalidArgument);
  REQUIRE_THROWS_WITH(Countrate("rate", {2, 5, 2}),
                      Contains("duplicate channel 2") && Contains("'rate'"));
  REQUIRE_THROWS_WITH(Countrate("rate", {}), Contains("empty"));
  REQUIRE_THROWS_WITH(Countrate("rate", {CHANNEL_UNUSED}), Contains("CHANNEL_UNUSED"));
}
