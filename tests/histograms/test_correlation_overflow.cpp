// Correlation across overflow intervals and errors: events inside an overflow interval are
// ignored, no pair spans an overflow interval or an Error tag (the partners seen before the
// gap are still paired), and g2 uses the capture time outside overflow intervals.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "support/pairs.hpp"
#include "support/reference.hpp"
#include "support/synthetic.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/correlation.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

Tag special(TagType type, timestamp_t time) {
  return Tag{type, 0, 0, 0, time};
}

// Error tags at `count` random times in (begin, end).
std::vector<Tag> withErrors(std::vector<Tag> tags, std::uint64_t seed, int count, timestamp_t begin,
                            timestamp_t end) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<timestamp_t> when(begin + 1, end - 1);
  for (int i = 0; i < count; ++i) tags.push_back(special(TagType::Error, when(random)));
  sortStream(tags);
  return tags;
}

}  // namespace

TEST_CASE("Correlation ignores events inside an overflow and pairs nothing across it",
          "[correlation][overflow]") {
  // Window -100 .. 100 ps in bins of 10 ps; bin 10 + tau/10.
  std::vector<Tag> tags{makeTimeTag(1, 100),
                        makeTimeTag(2, 110),
                        special(TagType::OverflowBegin, 120),
                        makeTimeTag(1, 130),
                        makeTimeTag(2, 135),  // inside: ignored
                        Tag{TagType::MissedEvents, 0, 3, 1, 150},
                        special(TagType::OverflowEnd, 150),
                        makeTimeTag(2, 160),
                        makeTimeTag(1, 170)};
  Correlation correlation("c", 1, 2, 10, 20);
  runMemory(tags, GENERATE(1, 3, 100), 0, 1000, {&correlation});
  std::vector<std::int64_t> expected(20, 0);
  expected[9] = 1;   // 100 - 110 = -10
  expected[11] = 1;  // 170 - 160 = +10
  CHECK(correlation.getData() == expected);
  CHECK(correlation.getEventCounts() == std::pair<std::uint64_t, std::uint64_t>{2, 2});
  CHECK(correlation.getOverflowCount() == 1);
  // g2 = T / (binwidth N1 N2) * counts with T = 1000 - 30 ps outside the overflow.
  const auto g2 = correlation.getDataNormalized();
  CHECK(g2[9] == Approx(970.0 / (10.0 * 2 * 2)).epsilon(1e-12));
  CHECK(g2[0] == 0.0);
  CHECK(correlation.getResults().facts.getInt("valid_duration_ps") == 970);
  CHECK(correlation.getData() == correlationReference(tags, 1, 2, 10, 20, 0, 1000).counts);
}

TEST_CASE("Correlation pairs nothing across an Error but keeps the pairs before it",
          "[correlation][overflow]") {
  // channel_1 at 90 waits for partners up to 190 ps; the Error at 105 cuts that short, but its
  // pair with channel_2 at 100 (tau = -10) counts. 110 - 100 would span the Error.
  const std::vector<Tag> tags{makeTimeTag(1, 90),           makeTimeTag(2, 100),
                              special(TagType::Error, 105), makeTimeTag(1, 110),
                              makeTimeTag(2, 130),          makeTimeTag(1, 150)};
  Correlation cross("cross", 1, 2, 10, 20);
  Correlation self("auto", 1, CHANNEL_UNUSED, 10, 20);
  runMemory(tags, GENERATE(1, 2, 100), 0, 1000, {&cross, &self});
  std::vector<std::int64_t> expected(20, 0);
  expected[9] = 1;   // 90 - 100
  expected[8] = 1;   // 110 - 130 = -20
  expected[12] = 1;  // 150 - 130 = +20
  CHECK(cross.getData() == expected);
  std::vector<std::int64_t> expected_auto(20, 0);
  expected_auto[14] = 1;  // 150 - 110 = +40
  expected_auto[6] = 1;   // 110 - 150 = -40; 90 is on the other side of the Error
  CHECK(self.getData() == expected_auto);
  // An Error is not an overflow: the whole capture counts in g2.
  CHECK(cross.getResults().facts.getInt("valid_duration_ps") == 1000);
}

TEST_CASE("Correlation with overflows and errors in a random stream equals the brute force",
          "[correlation][overflow]") {
  constexpr timestamp_t kEnd = 4'000'000;
  std::vector<Tag> tags = randomTags(51, {1, 2}, 0, kEnd, 300.0);
  tags = withOverflow(tags, 1'000'000, 1'050'000);
  tags = withOverflow(tags, 2'500'123, 2'500'400);  // shorter than the window
  tags = withErrors(tags, 52, 6, 0, kEnd);
  REQUIRE(overflowIntervalsOf(tags).size() == 2);
  const std::uint64_t seed = GENERATE(1, 2);
  const auto blocks = cutIntoBlocks(tags, 0, kEnd, seed, 0.05, 0.3);

  Correlation cross("cross", 1, 2, 64, 33);
  Correlation self("auto", 2, 2, 64, 34);
  runScripted(blocks, {&cross, &self});
  const auto cross_ref = correlationReference(tags, 1, 2, 64, 33, 0, kEnd);
  const auto auto_ref = correlationReference(tags, 2, 2, 64, 34, 0, kEnd);
  CHECK(cross_ref.valid_time == kEnd - 50'000 - 277);
  CHECK(cross.getData() == cross_ref.counts);
  CHECK(self.getData() == auto_ref.counts);
  CHECK(cross.getEventCounts() ==
        std::pair<std::uint64_t, std::uint64_t>{cross_ref.n1, cross_ref.n2});
  CHECK(sameValues(cross.getDataNormalized(), cross_ref.normalized(), 1e-12));
  CHECK(sameValues(self.getDataNormalized(), auto_ref.normalized(), 1e-12));
}

TEST_CASE("Correlation over the synthetic source's injected overflows equals the brute force",
          "[correlation][overflow]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 3e6),
                     SyntheticChannel::partner(2, 1, 800, 100, 0.6)};
  config.seed = 61;
  config.block_size = GENERATE(5, 512);
  config.duration_ps = 4'000'000'000;              // 4 ms, ~20000 tags
  config.overflows = {{500'000'000, 500'000'500},  // 0.5 ns: shorter than the delay
                      {1'234'567'000, 1'534'567'000},
                      {3'000'000'000, 3'000'100'000}};
  const DrainedStream stream = drainSynthetic(config);
  REQUIRE(overflowIntervalsOf(stream.tags).size() == 3);

  SyntheticSource source(config);
  Correlation correlation("c", 2, 1, 50, 40);
  runGraph(source, {&correlation});
  const auto ref = correlationReference(stream.tags, 2, 1, 50, 40, stream.begin(), stream.end());
  CHECK(ref.valid_time == stream.end() - stream.begin() - 500 - 300'000'000 - 100'000);
  CHECK(correlation.getData() == ref.counts);
  CHECK(correlation.getOverflowCount() == 3);
  CHECK(sameValues(correlation.getDataNormalized(), ref.normalized(), 1e-12));
}

TEST_CASE("A run cut inside an overflow interval leaves the next run inside it",
          "[correlation][overflow][graph]") {
  // The cut at 4.5 us falls inside the interval from 4 to 6 us: the second run begins there,
  // and its time up to 6 us is overflow time, as in one pass.
  const std::vector<Tag> tags =
      withOverflow(randomTags(5, {1, 2}, 0, 10'000'000, 2000.0), 4'000'000, 6'000'000);
  const auto pass = [&](const std::vector<timestamp_t>& cuts) {
    MemorySource source(std::make_shared<const std::vector<Tag>>(tags), 997, 0, 10'000'000);
    Correlation correlation("c", 1, 2, 100, 200);
    MeasurementGraph graph(source, GraphOptions{.threads = 2});
    graph.add(correlation);
    for (const timestamp_t cut : cuts) graph.run(cut);
    graph.run();
    return correlation.getResults();
  };
  const ResultSet whole = pass({});
  const ResultSet cut = pass({4'500'000});
  CHECK(whole.facts.getInt("valid_duration_ps") == 8'000'000);
  CHECK(cut.facts.getInt("valid_duration_ps") == 8'000'000);
  CHECK(cut.array("data").data == whole.array("data").data);
}
