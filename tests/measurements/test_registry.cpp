// The measurement registry builds measurements from configuration parameters and names bad
// kinds and keys.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "tagflow/core/error.hpp"
#include "tagflow/kinds.hpp"
#include "tagflow/measurements/counter.hpp"

using namespace tagflow;
using Catch::Contains;

TEST_CASE("makeMeasurement builds a Counter from parameters", "[registry]") {
  const Parameters p{{"channels", std::vector<std::int64_t>{3, -3}},
                     {"binwidth", std::int64_t{5000}},
                     {"n_values", std::int64_t{12}}};
  const auto measurement = makeMeasurement("Counter", "c", p);
  const auto* counter = dynamic_cast<const Counter*>(measurement.get());
  REQUIRE(counter != nullptr);
  CHECK(counter->name() == "c");
  CHECK(counter->channels() == std::vector<channel_t>{3, -3});
  CHECK(counter->binwidth() == 5000);
  CHECK(counter->nValues() == 12);
  CHECK(counter->parameters().getInt("binwidth") == 5000);
}

TEST_CASE("makeMeasurement names unknown kinds, unknown keys and bad values", "[registry]") {
  const Parameters channels{{"channels", std::vector<std::int64_t>{1}}};
  REQUIRE_THROWS_AS(makeMeasurement("Conter", "c", channels), InvalidArgument);
  REQUIRE_THROWS_WITH(makeMeasurement("Conter", "c", channels),
                      Contains("'Conter'") && Contains("Counter") && Contains("Countrate"));
  Parameters extra = channels;
  extra.set("binwidht", std::int64_t{5});
  REQUIRE_THROWS_WITH(makeMeasurement("Counter", "c", extra), Contains("'binwidht'"));
  const Parameters huge{{"channels", std::vector<std::int64_t>{1, std::int64_t{1} << 33}}};
  REQUIRE_THROWS_WITH(makeMeasurement("Countrate", "r", huge),
                      Contains(std::to_string(std::int64_t{1} << 33)));
  Parameters bad_width = channels;
  bad_width.set("binwidth", std::int64_t{-4});
  REQUIRE_THROWS_WITH(makeMeasurement("Counter", "c", bad_width), Contains("binwidth -4"));
  for (const auto& kind : allMeasurementKinds()) {
    CHECK_FALSE(kind.schema->summary().empty());
    CHECK_FALSE(kind.schema->keys().empty());
  }
}

TEST_CASE("A bad value gets the same message from C++ and from parameters", "[registry]") {
  std::string from_constructor, from_parameters;
  try {
    Counter("c", {1}, 0, 10);
  } catch (const InvalidArgument& error) {
    from_constructor = error.what();
  }
  try {
    makeMeasurement("Counter", "c",
                    Parameters{{"channels", std::vector<std::int64_t>{1}},
                               {"binwidth", std::int64_t{0}},
                               {"n_values", std::int64_t{10}}});
  } catch (const InvalidArgument& error) {
    from_parameters = error.what();
  }
  CHECK(from_constructor == "Counter 'c': binwidth 0 ps is invalid (valid: >= 1)");
  CHECK(from_parameters == from_constructor);
}

TEST_CASE("Stored parameters carry the defaults and the declared units", "[registry]") {
  const auto counter =
      makeMeasurement("Counter", "c", Parameters{{"channels", std::vector<std::int64_t>{1}}});
  CHECK(counter->parameters().getInt("binwidth") == 1'000'000'000);
  CHECK(counter->parameters().getInt("n_values") == 1);
  const ResultSet results = counter->getResults();
  REQUIRE(results.parameter_units.size() == 1);
  CHECK(results.parameter_units[0] == std::pair<std::string, std::string>{"binwidth", "ps"});
}

// Each required key of a kind given a plain value of its type: channels all different, real
// numbers rising (a range's start before its stop).
Parameters plainArguments(const ParameterSchema& schema, const std::string& text) {
  Parameters given;
  std::int64_t next_channel = 1;
  double next_real = -9;
  for (const ParameterSpec& spec : schema.keys()) {
    if (!spec.isRequired()) continue;
    switch (spec.type()) {
      case ParameterType::Channel:
        given.set(spec.name(), next_channel++);
        break;
      case ParameterType::ChannelList:
        given.set(spec.name(), std::vector<std::int64_t>{next_channel++});
        break;
      case ParameterType::Integer:
        given.set(spec.name(), std::int64_t{1});
        break;
      case ParameterType::Real:
        given.set(spec.name(), next_real++);
        break;
      case ParameterType::IntegerList:
        given.set(spec.name(), std::vector<std::int64_t>{1});
        break;
      case ParameterType::Text:
        given.set(spec.name(), text);
        break;
      default:
        FAIL("no plain value for key '" << spec.name() << "'");
    }
  }
  return given;
}

TEST_CASE("Each kind declares whether it splits by time as its instances do", "[registry]") {
  const auto folder =
      std::filesystem::temp_directory_path() / ("tagflow-kinds-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  for (const auto& kind : allMeasurementKinds()) {
    INFO(kind.kind());
    const auto built = makeMeasurement(
        kind.kind(), "m", plainArguments(*kind.schema, (folder / "made.tags").string()));
    CHECK(kind.splits_by_time == built->splitSupport().has_value());
    if (kind.splits_by_time) {
      CHECK_NOTHROW(requireSplitsByTime(kind));
    } else {
      CHECK_THROWS_WITH(requireSplitsByTime(kind),
                        kind.kind() +
                            " cannot be split by time (it runs as one; valid: "
                            "parallel = 1)");
    }
  }
  CHECK_FALSE(findKind(allMeasurementKinds(), "FileWriter", "measurement").splits_by_time);
  std::filesystem::remove_all(folder);
}
