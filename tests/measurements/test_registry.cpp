// The measurement registry builds measurements from configuration parameters and names bad
// kinds and keys.
#include <catch2/catch.hpp>

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
