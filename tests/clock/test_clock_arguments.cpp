// Bad parameters of FrequencyStability and PhaseNoise are rejected naming the value and the
// valid range; without data (or with too little) the outputs are NaN or empty, as documented;
// the registry builds both from configuration parameters.
#include <catch2/catch.hpp>

#include <cmath>

#include "support/pairs.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/kinds.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/phase_noise.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

TEST_CASE("FrequencyStability rejects bad parameters", "[frequency_stability][arguments]") {
  const auto rejects = [](std::vector<std::int64_t> steps, std::int64_t average,
                          std::int64_t trace_len, const std::string& text) {
    INFO(text);
    CHECK_THROWS_WITH(FrequencyStability("fs", 3, steps, average, trace_len), Contains(text));
    CHECK_THROWS_AS(FrequencyStability("fs", 3, steps, average, trace_len), InvalidArgument);
  };
  rejects({}, 1000, 10, "steps holds 0 value(s) (valid: at least 1)");
  rejects({1, 0}, 1000, 10, "steps 0 is invalid (valid: 1..16777216)");
  rejects({-3}, 1000, 10, "steps -3 is invalid");
  rejects({1 << 25}, 1000, 10, "steps 33554432 is invalid");
  rejects({1}, 0, 10, "average 0 is invalid (valid: 1..4294967296)");
  rejects({1}, -5, 10, "average -5");
  rejects({1}, 1000, -1, "trace_len -1 is invalid (valid: 0..16777216)");
  CHECK_THROWS_WITH(FrequencyStability("fs", CHANNEL_UNUSED, {1}), Contains("CHANNEL_UNUSED"));
  CHECK_NOTHROW(FrequencyStability("fs", -3, {1, 1, 5}, 1, 0));
}

TEST_CASE("PhaseNoise rejects bad parameters", "[phase_noise][arguments]") {
  CHECK_THROWS_WITH(PhaseNoise("pn", {3}, 1),
                    Contains("samples_per_octave 1 is invalid (valid: 2..65536)"));
  CHECK_THROWS_WITH(PhaseNoise("pn", {3}, 65537), Contains("samples_per_octave 65537"));
  CHECK_THROWS_AS(PhaseNoise("pn", {3}, 0), InvalidArgument);
  CHECK_THROWS_WITH(PhaseNoise("pn", {}, 64), Contains("channels must not be empty"));
  CHECK_THROWS_WITH(PhaseNoise("pn", {3, 4, 3}, 64), Contains("duplicate channel 3"));
  CHECK_NOTHROW(PhaseNoise("pn", {3}, 3));  // any count >= 2, powers of two not required
}

TEST_CASE("Without enough edges the clock measurements give NaN and empty spectra",
          "[frequency_stability][phase_noise][arguments]") {
  // Channel 3 gets 1500 edges: 1 sample of 1000 (no period yet); the phase noise warm-up of
  // 1024 edges completes, but 1500 samples fill no segment of 8 * 256.
  std::vector<Tag> tags;
  for (timestamp_t k = 0; k < 1500; ++k) tags.push_back(makeTimeTag(3, 1000 + k * 100'000));
  FrequencyStability stability("fs", 3, {1, 2}, 1000, 10);
  PhaseNoise noise("pn", {3, 4}, 256);
  runMemory(tags, 256, 0, tags.back().time + 1, {&stability, &noise});
  const auto d = stability.getDataObject();
  CHECK(std::isnan(d.tau[0]));
  CHECK(std::isnan(d.adev[0]));
  CHECK(std::isnan(d.tdev[1]));
  CHECK(std::isnan(stability.getMeanPeriod()));
  CHECK(d.trace_index.empty());
  CHECK(stability.getSampleCount() == 1);
  const auto spectra = noise.getDataObject();
  REQUIRE(spectra.size() == 2);
  CHECK(spectra[0].frequency == Approx(1e7).epsilon(1e-12));  // the warm-up ran: 1500 edges
  CHECK(spectra[0].offset.empty());                           // but no segment yet
  CHECK(std::isnan(spectra[1].frequency));
  const ResultSet results = noise.getResults();
  CHECK(results.array("offset").shape == std::vector<std::size_t>{2, 0});
  CHECK(results.array("frequency").shape == std::vector<std::size_t>{2});
  const ResultSet stability_results = stability.getResults();
  CHECK(stability_results.array("adev").shape == std::vector<std::size_t>{2});
  CHECK(stability_results.array("trace_phase").shape == std::vector<std::size_t>{0});
}

TEST_CASE("The registry builds FrequencyStability and PhaseNoise", "[registry][arguments]") {
  const auto stability = makeMeasurement(
      "FrequencyStability", "fs",
      Parameters{{"channel", std::int64_t{3}}, {"steps", std::vector<std::int64_t>{1, 10}}});
  CHECK(stability->kind() == "FrequencyStability");
  CHECK(stability->parameters().getInt("average") == 1000);
  CHECK(stability->parameters().getInt("trace_len") == 1000);
  CHECK_THROWS_WITH(makeMeasurement("FrequencyStability", "fs",
                                    Parameters{{"channel", std::int64_t{3}},
                                               {"steps", std::vector<std::int64_t>{1}},
                                               {"avg", std::int64_t{5}}}),
                    Contains("avg"));
  const auto noise =
      makeMeasurement("PhaseNoise", "pn", Parameters{{"channels", std::vector<std::int64_t>{3}}});
  CHECK(noise->kind() == "PhaseNoise");
  CHECK(noise->parameters().getInt("samples_per_octave") == PhaseNoise::kDefaultSamplesPerOctave);
  CHECK_THROWS_WITH(makeMeasurement("PhaseNoise", "pn",
                                    Parameters{{"channels", std::vector<std::int64_t>{3}},
                                               {"samples_per_octave", std::int64_t{1}}}),
                    Contains("samples_per_octave 1"));
}
