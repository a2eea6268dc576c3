// Bad arguments of Correlation and HistogramLogBins, directly and through the registry: each
// throws InvalidArgument naming the value and the valid range.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "tagflow/core/error.hpp"
#include "tagflow/kinds.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

using namespace tagflow;
using Catch::Contains;

TEST_CASE("Correlation rejects bad binwidth, n_bins and channel_1", "[correlation][arguments]") {
  REQUIRE_THROWS_AS(Correlation("c", 1, 2, 0, 10), InvalidArgument);
  REQUIRE_THROWS_WITH(Correlation("c", 1, 2, 0, 10),
                      Contains("binwidth 0") && Contains("valid: 1.."));
  REQUIRE_THROWS_AS(Correlation("c", 1, 2, -5, 10), InvalidArgument);
  REQUIRE_THROWS_WITH(Correlation("c", 1, 2, -5, 10),
                      Contains("binwidth -5") && Contains("valid: 1.."));
  REQUIRE_THROWS_AS(Correlation("c", 1, 2, 10, 0), InvalidArgument);
  REQUIRE_THROWS_WITH(Correlation("c", 1, 2, 10, 0),
                      Contains("n_bins 0") && Contains("valid: 1.."));
  REQUIRE_THROWS_AS(Correlation("c", 1, 2, 10, -3), InvalidArgument);
  REQUIRE_THROWS_WITH(Correlation("c", 1, 2, 10, -3),
                      Contains("n_bins -3") && Contains("valid: 1.."));
  REQUIRE_THROWS_AS(Correlation("c", CHANNEL_UNUSED, 2, 10, 10), InvalidArgument);
  REQUIRE_THROWS_WITH(Correlation("c", CHANNEL_UNUSED, 2, 10, 10),
                      Contains("'c'") && Contains("channel_1"));
  REQUIRE_THROWS_AS(Correlation("c", CHANNEL_UNUSED), InvalidArgument);
  // A bound of 2^52 is shown in full: rounded, a value just above it would look inside it.
  REQUIRE_THROWS_WITH(Correlation("c", 1, 2, 4'503'599'627'370'500, 1),
                      "Correlation 'c': binwidth 4503599627370500 ps is invalid (valid: "
                      "1..4503599627370496)");
  // The limits themselves are fine.
  REQUIRE_NOTHROW(Correlation("c", 1, 2, 1, 1));
  REQUIRE_NOTHROW(Correlation("c", 1));
}

TEST_CASE("HistogramLogBins rejects bad exponents, n_bins and gates", "[log_bins][arguments]") {
  REQUIRE_THROWS_AS(HistogramLogBins("h", 1, 2, -13, -9, 10), InvalidArgument);
  REQUIRE_THROWS_WITH(HistogramLogBins("h", 1, 2, -13, -9, 10),
                      Contains("exp_start -13 is invalid (valid: -12..6)"));
  REQUIRE_THROWS_AS(HistogramLogBins("h", 1, 2, -9, -9, 10), InvalidArgument);
  REQUIRE_THROWS_WITH(HistogramLogBins("h", 1, 2, -9, -9, 10),
                      Contains("exp_stop -9") && Contains("> exp_start"));
  REQUIRE_THROWS_AS(HistogramLogBins("h", 1, 2, -9, -10, 10), InvalidArgument);
  REQUIRE_THROWS_WITH(HistogramLogBins("h", 1, 2, -9, -10, 10),
                      Contains("exp_stop -10") && Contains("> exp_start"));
  // A start above any stop is named itself, not through the stop.
  for (const double start : {1e30, std::numeric_limits<double>::infinity()}) {
    REQUIRE_THROWS_WITH(HistogramLogBins("h", 1, 2, start, 6, 10),
                        Contains("exp_start") && Contains("is invalid (valid: -12..6)"));
  }
  REQUIRE_THROWS_AS(HistogramLogBins("h", 1, 2, -9, 6.5, 10), InvalidArgument);
  REQUIRE_THROWS_WITH(HistogramLogBins("h", 1, 2, -9, 6.5, 10),
                      Contains("exp_stop 6.5") && Contains("<= 6"));
  REQUIRE_THROWS_AS(HistogramLogBins("h", 1, 2, -9, -6, 0), InvalidArgument);
  REQUIRE_THROWS_WITH(HistogramLogBins("h", 1, 2, -9, -6, 0),
                      Contains("n_bins 0") && Contains("valid: 1.."));
  REQUIRE_THROWS_AS(HistogramLogBins("h", 1, 2, -9, -6, -7), InvalidArgument);
  REQUIRE_THROWS_WITH(HistogramLogBins("h", 1, 2, -9, -6, -7),
                      Contains("n_bins -7") && Contains("valid: 1.."));
  REQUIRE_THROWS_AS(HistogramLogBins("h", 1, 2, -9, -6, 10, ChannelGate{3, 3, false}),
                    InvalidArgument);
  REQUIRE_THROWS_WITH(
      HistogramLogBins("h", 1, 2, -9, -6, 10, ChannelGate{3, 3, false}),
      Contains("click_gate") && Contains("channel 3") && Contains("two different channels"));
  REQUIRE_THROWS_AS(
      HistogramLogBins("h", 1, 2, -9, -6, 10, std::nullopt, ChannelGate{-4, -4, true}),
      InvalidArgument);
  REQUIRE_THROWS_WITH(
      HistogramLogBins("h", 1, 2, -9, -6, 10, std::nullopt, ChannelGate{-4, -4, true}),
      Contains("start_gate") && Contains("channel -4") && Contains("two different channels"));
  // Every edge of 1 .. 1.26 ps rounds to 1 ps: no bin is left.
  REQUIRE_THROWS_AS(HistogramLogBins("h", 1, 2, -12, -11.9, 50), InvalidArgument);
  REQUIRE_THROWS_WITH(
      HistogramLogBins("h", 1, 2, -12, -11.9, 50),
      Contains("every edge of [1e-12, 1e-11.9) s rounds to the same picosecond (valid: "));
  // The limits themselves are fine.
  REQUIRE_NOTHROW(HistogramLogBins("h", 1, 2, -12, 6, 1));
  REQUIRE_NOTHROW(HistogramLogBins("h", 1, 1, -12, -11, 1, ChannelGate{3, 4, true}));
}

TEST_CASE("The registry builds Correlation and HistogramLogBins and names bad keys",
          "[registry][arguments]") {
  const Parameters correlation{
      {"channel_1", std::int64_t{3}}, {"binwidth", std::int64_t{7}}, {"n_bins", std::int64_t{9}}};
  const auto built = makeMeasurement("Correlation", "c", correlation);
  const auto* as_correlation = dynamic_cast<const Correlation*>(built.get());
  REQUIRE(as_correlation != nullptr);
  CHECK(as_correlation->getIndex().size() == 9);
  CHECK(as_correlation->getIndex()[4] == 0);

  Parameters misspelt = correlation;
  misspelt.set("n_bin", std::int64_t{9});
  REQUIRE_THROWS_AS(makeMeasurement("Correlation", "c", misspelt), InvalidArgument);
  REQUIRE_THROWS_WITH(makeMeasurement("Correlation", "c", misspelt), Contains("'n_bin'"));
  Parameters zero_width = correlation;
  zero_width.set("binwidth", std::int64_t{0});
  REQUIRE_THROWS_WITH(makeMeasurement("Correlation", "c", zero_width),
                      Contains("binwidth 0") && Contains("valid: 1.."));

  const Parameters log_bins{{"click_channel", std::int64_t{2}},
                            {"start_channel", std::int64_t{1}},
                            {"exp_start", -12.0},
                            {"exp_stop", std::int64_t{-9}},
                            {"n_bins", std::int64_t{3}},
                            {"click_gate", std::vector<std::int64_t>{3, 4}},
                            {"start_gate", std::vector<std::int64_t>{5, 6, 1}}};
  const auto histogram = makeMeasurement("HistogramLogBins", "h", log_bins);
  const auto* as_histogram = dynamic_cast<const HistogramLogBins*>(histogram.get());
  REQUIRE(as_histogram != nullptr);
  CHECK(as_histogram->getBinEdges() == std::vector<std::int64_t>{1, 10, 100, 1000});

  Parameters unknown = log_bins;
  unknown.set("gate", std::vector<std::int64_t>{3, 4});
  REQUIRE_THROWS_AS(makeMeasurement("HistogramLogBins", "h", unknown), InvalidArgument);
  REQUIRE_THROWS_WITH(makeMeasurement("HistogramLogBins", "h", unknown), Contains("'gate'"));
  for (const std::vector<std::int64_t>& gate :
       {std::vector<std::int64_t>{3}, std::vector<std::int64_t>{3, 4, 1, 0},
        std::vector<std::int64_t>{}}) {
    INFO("gate of " << gate.size() << " values");
    Parameters bad_gate = log_bins;
    bad_gate.set("click_gate", gate);
    REQUIRE_THROWS_AS(makeMeasurement("HistogramLogBins", "h", bad_gate), InvalidArgument);
    REQUIRE_THROWS_WITH(makeMeasurement("HistogramLogBins", "h", bad_gate),
                        Contains("click_gate holds") && Contains("2..3"));
  }
  Parameters same_channels = log_bins;
  same_channels.set("start_gate", std::vector<std::int64_t>{5, 5});
  REQUIRE_THROWS_WITH(makeMeasurement("HistogramLogBins", "h", same_channels),
                      Contains("start_gate") && Contains("channel 5"));
  for (const std::int64_t initially_open : {2, -1}) {
    Parameters bad_state = log_bins;
    bad_state.set("click_gate", std::vector<std::int64_t>{3, 4, initially_open});
    REQUIRE_THROWS_WITH(makeMeasurement("HistogramLogBins", "h", bad_state),
                        "HistogramLogBins 'h': click_gate initially_open " +
                            std::to_string(initially_open) +
                            " is invalid (valid: 0 closed, 1 open)");
  }
  Parameters low = log_bins;
  low.set("exp_start", -14.0);
  REQUIRE_THROWS_WITH(makeMeasurement("HistogramLogBins", "h", low),
                      Contains("exp_start -14 is invalid (valid: -12..6)"));
  REQUIRE_THROWS_AS(makeMeasurement("Histogram", "h", log_bins), InvalidArgument);
  REQUIRE_THROWS_WITH(makeMeasurement("Histogram", "h", log_bins),
                      Contains("'Histogram'") && Contains("HistogramLogBins"));
}
