// A graph over a time range of a recording: three graphs, each running its range of an
// indexed tag file (seeking to the range less the margins), give partial states that merge
// in order into exactly the results of one graph over the whole recording; a graph with a
// measurement that cannot split refuses a range.
#include <catch2/catch.hpp>

#include <cstring>

#include "support/drain.hpp"
#include "support/synthetic.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/file_writer.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

using namespace tagflow;

namespace {

std::vector<std::unique_ptr<Measurement>> measurementsOfOneGraph() {
  std::vector<std::unique_ptr<Measurement>> all;
  all.push_back(std::make_unique<Countrate>("rate", std::vector<channel_t>{1, 2, 3}));
  all.push_back(std::make_unique<Correlation>("g2", 3, 1, 1000, 2000));
  all.push_back(std::make_unique<HistogramLogBins>("hlb", 3, 1, -10.0, -6.0, 100));
  return all;
}

std::string recordSynthetic(const test::TempDir& dir) {
  SyntheticConfig config = test::mixedConfig(30'000'000'000, 4096, 1.0, 4);
  config.overflows = {{9'000'000'000, 9'200'000'000}};
  SyntheticSource source(config);
  MeasurementGraph graph(source);
  const std::string path = dir.file("rec.tags");
  FileWriter writer("writer", path, {1, 2, 3, -1}, 300'000);  // several parts
  graph.add(writer);
  graph.run();
  return path;
}

}  // namespace

TEST_CASE("Range runs of a recording merge into the results of one run", "[graph][tagfile]") {
  test::TempDir dir;
  const std::string path = recordSynthetic(dir);

  auto whole = measurementsOfOneGraph();
  {
    FileReader source(path);
    MeasurementGraph graph(source);
    for (auto& measurement : whole) graph.add(*measurement);
    graph.run();
  }

  FileReader probe(path);
  const std::optional<StreamSpan> span = probe.timeSpan();
  REQUIRE(span.has_value());
  const timestamp_t length = span->end - span->begin;
  const std::vector<timestamp_t> bounds{span->begin, span->begin + length / 3 + 777,
                                        span->begin + 2 * length / 3, span->end};
  auto merged = measurementsOfOneGraph();
  for (std::size_t r = 0; r + 1 < bounds.size(); ++r) {
    auto part = measurementsOfOneGraph();
    FileReader source(path);
    MeasurementGraph graph(source);
    for (auto& measurement : part) graph.add(*measurement);
    const Profile profile = graph.runRange(bounds[r], bounds[r + 1]);
    // Seeking: each range reads little more than its share.
    CHECK(profile.stream_duration_ps < length / 3 + length / 20);
    for (std::size_t m = 0; m < part.size(); ++m) {
      merged[m]->mergePartialState(part[m]->getPartialState());
    }
  }
  for (std::size_t m = 0; m < whole.size(); ++m) {
    const ResultSet expected = whole[m]->getResults();
    const ResultSet actual = merged[m]->getResults();
    INFO(expected.name);
    REQUIRE(expected.arrays.size() == actual.arrays.size());
    for (std::size_t a = 0; a < expected.arrays.size(); ++a) {
      INFO(expected.arrays[a].name);
      CHECK(expected.arrays[a].data == actual.arrays[a].data);
    }
    CHECK(expected.facts.getInt("capture_duration_ps") ==
          actual.facts.getInt("capture_duration_ps"));
    CHECK(expected.facts.getInt("overflow_count") == actual.facts.getInt("overflow_count"));
  }
}

TEST_CASE("A graph with a measurement that cannot split refuses a time range", "[graph][tagfile]") {
  test::TempDir dir;
  SyntheticSource source(test::mixedConfig(1'000'000'000, 4096));
  MeasurementGraph graph(source);
  FileWriter writer("writer", dir.file("x.tags"), {1, 2});
  graph.add(writer);
  CHECK_THROWS_WITH(graph.runRange(0, 1'000'000),
                    Catch::Matchers::Contains("FileWriter 'writer' cannot be split by time"));
  CHECK_THROWS_WITH(graph.runRange(10, 10), Catch::Matchers::Contains("[10, 10) ps is empty"));
}
