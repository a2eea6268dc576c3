// Parameters: ordered, typed settings; getters name the key and the expected type on error.
#include <catch2/catch.hpp>

#include "tagflow/core/error.hpp"
#include "tagflow/core/parameters.hpp"

using namespace tagflow;
using Catch::Contains;

TEST_CASE("Parameters keep insertion order and replace a key in place", "[parameters]") {
  Parameters p{{"b", std::int64_t{2}}, {"a", 1.5}};
  p.set("c", std::string("text"));
  p.set("b", std::int64_t{20});
  REQUIRE(p.entries().size() == 3);
  CHECK(p.entries()[0].first == "b");
  CHECK(p.entries()[1].first == "a");
  CHECK(p.entries()[2].first == "c");
  CHECK(p.getInt("b") == 20);
  CHECK(p.getDouble("a") == 1.5);
  CHECK(p.getDouble("b") == 20.0);  // integers are numbers too
  CHECK(p.getString("c") == "text");
  CHECK(p.contains("a"));
  CHECK_FALSE(p.contains("z"));
}

TEST_CASE("Parameters fall back only for missing keys", "[parameters]") {
  const Parameters p{
      {"n", std::int64_t{3}}, {"flag", true}, {"list", std::vector<std::int64_t>{4, 5}}};
  CHECK(p.getInt("missing", 7) == 7);
  CHECK(p.getInt("n", 7) == 3);
  CHECK(p.getBool("flag", false));
  CHECK(p.getBool("missing", true));
  CHECK(p.getString("missing", "x") == "x");
  CHECK(p.getIntList("list") == std::vector<std::int64_t>{4, 5});
  CHECK(p.getIntList("n") == std::vector<std::int64_t>{3});
}

TEST_CASE("Parameter getters name the key and the type on error", "[parameters]") {
  const Parameters p{{"rate", 2.5}, {"name", std::string("x")}};
  REQUIRE_THROWS_AS(p.getInt("rate"), InvalidArgument);
  REQUIRE_THROWS_WITH(p.getInt("rate"),
                      Contains("'rate'") && Contains("integer") && Contains("2.5"));
  REQUIRE_THROWS_WITH(p.getDouble("name"), Contains("'name'") && Contains("string"));
  REQUIRE_THROWS_WITH(p.getInt("absent"), Contains("missing key 'absent'"));
  REQUIRE_THROWS_WITH(p.getInt("rate", 1), Contains("'rate'"));  // present but wrong type
  REQUIRE_THROWS_WITH(p.getBool("rate", false), Contains("'rate'"));
}

TEST_CASE("requireOnly names the unknown key and the valid ones", "[parameters]") {
  const Parameters p{{"channels", std::int64_t{1}}, {"binwidht", std::int64_t{5}}};
  CHECK_NOTHROW(p.requireOnly({"channels", "binwidht"}, "Counter"));
  REQUIRE_THROWS_AS(p.requireOnly({"channels", "binwidth"}, "Counter 'c'"), InvalidArgument);
  REQUIRE_THROWS_WITH(
      p.requireOnly({"channels", "binwidth"}, "Counter 'c'"),
      Contains("'binwidht'") && Contains("Counter 'c'") && Contains("channels, binwidth"));
}

TEST_CASE("formatParameter writes every value type", "[parameters]") {
  CHECK(formatParameter(std::int64_t{-3}) == "-3");
  CHECK(formatParameter(true) == "true");
  CHECK(formatParameter(std::string("a")) == "\"a\"");
  CHECK(formatParameter(std::vector<std::int64_t>{1, 2}) == "[1, 2]");
  CHECK(parameterTypeName(std::vector<double>{}) == "number list");
}
