// ParameterSchema: one declaration checks keys, types, ranges and list sizes, fills in defaults
// in declaration order, and writes the help; every message names the owner, the key, the value
// and the valid range.
#include <catch2/catch.hpp>

#include <cmath>

#include "tagflow/core/error.hpp"
#include "tagflow/core/parameter_schema.hpp"

using namespace tagflow;
using Catch::Contains;

namespace {

const ParameterSchema& schema() {
  static const ParameterSchema declared(
      "Widget", "a test kind",
      {ParameterSpec::channels("channels").sizeBetween(1, 3).help("inputs"),
       ParameterSpec::integer("width")
           .unit("ps")
           .atLeast(1)
           .atMost(1000)
           .byDefault(std::int64_t{10})
           .help("bin width"),
       ParameterSpec::real("gain").above(0).byDefault(1.5).help("gain"),
       ParameterSpec::text("mode")
           .oneOf({"fast", "slow"})
           .byDefault(std::string("fast"))
           .help("mode"),
       ParameterSpec::channel("reference").optional().help("reference channel"),
       ParameterSpec::integers("group").numbered().sizeBetween(2, 4).help("a group")});
  return declared;
}

std::string messageOf(const Parameters& given) {
  try {
    schema().validate(given, "Widget 'w'");
  } catch (const InvalidArgument& error) {
    return error.what();
  }
  return "";
}

const Parameters kMinimal{{"channels", std::vector<std::int64_t>{1, 2}}};

Parameters with(std::string key, ParameterValue value) {
  Parameters given = kMinimal;
  given.set(std::move(key), std::move(value));
  return given;
}

}  // namespace

TEST_CASE("validate fills in defaults in declaration order", "[parameters]") {
  Parameters given{{"mode", std::string("slow")}, {"channels", std::vector<std::int64_t>{4}}};
  const Parameters checked = schema().validate(given, "Widget 'w'");
  REQUIRE(checked.entries().size() == 4);
  CHECK(checked.entries()[0].first == "channels");
  CHECK(checked.getInt("width") == 10);
  CHECK(checked.getDouble("gain") == 1.5);
  CHECK(checked.getString("mode") == "slow");
  CHECK_FALSE(checked.contains("reference"));
}

TEST_CASE("validate accepts integers for numbers and numbered keys in sequence", "[parameters]") {
  Parameters given = with("gain", std::int64_t{3});
  given.set("group_0", std::vector<std::int64_t>{1, 2});
  given.set("group_1", std::vector<std::int64_t>{3, 4, 5});
  const Parameters checked = schema().validate(given, "Widget 'w'");
  CHECK(std::holds_alternative<double>(checked.at("gain")));
  CHECK(checked.getIntList("group_1") == std::vector<std::int64_t>{3, 4, 5});
}

TEST_CASE("numbered keys are taken by number, in any order given", "[parameters]") {
  // A configuration file's table lists its keys by name: group_10 before group_2.
  Parameters given = kMinimal;
  for (const int i : {0, 1, 10, 11, 2, 3, 4, 5, 6, 7, 8, 9}) {
    given.set("group_" + std::to_string(i), std::vector<std::int64_t>{i, i + 100});
  }
  const Parameters checked = schema().validate(given, "Widget 'w'");
  std::vector<std::string> keys;
  for (const auto& [key, value] : checked.entries()) {
    if (key.rfind("group_", 0) == 0) keys.push_back(key);
  }
  REQUIRE(keys.size() == 12);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    CHECK(keys[i] == "group_" + std::to_string(i));
    CHECK(checked.getIntList(keys[i]) ==
          std::vector<std::int64_t>{static_cast<std::int64_t>(i),
                                    static_cast<std::int64_t>(i) + 100});
  }
}

TEST_CASE("validate names the key, the value and the valid range", "[parameters]") {
  CHECK(messageOf(with("width", std::int64_t{0})) ==
        "Widget 'w': width 0 ps is invalid (valid: 1..1000)");
  CHECK(messageOf(with("width", std::int64_t{1001})) ==
        "Widget 'w': width 1001 ps is invalid (valid: 1..1000)");
  CHECK(messageOf(with("gain", 0.0)) == "Widget 'w': gain 0 is invalid (valid: > 0)");
  CHECK(messageOf(with("mode", std::string("medium"))) ==
        "Widget 'w': mode 'medium' is invalid (valid: fast, slow)");
  CHECK_THAT(messageOf(with("width", 2.5)), Contains("width") && Contains("an integer"));
  CHECK(messageOf(with("channels", std::vector<std::int64_t>{1, 2, 3, 4})) ==
        "Widget 'w': channels holds 4 value(s) (valid: 1..3)");
  // [] in a file has no element type: read as numbers, it is an empty list of channels.
  CHECK(messageOf(with("channels", std::vector<double>{})) ==
        "Widget 'w': channels holds 0 value(s) (valid: 1..3)");
  CHECK_THAT(messageOf(with("reference", std::int64_t{1} << 40)),
             Contains("1099511627776") && Contains("32-bit"));
  CHECK_THAT(messageOf(with("widht", std::int64_t{1})),
             Contains("unknown key 'widht'") && Contains("width") && Contains("group_0"));
  CHECK(messageOf(Parameters{}) ==
        "Widget 'w': key 'channels' is missing (a list of channels: inputs)");
  CHECK(messageOf(with("group_1", std::vector<std::int64_t>{1, 2})) ==
        "Widget 'w': key 'group_1' has no group_0 before it (valid: group_0, group_1, ... "
        "without a gap)");
  CHECK(messageOf(with("group_01", std::vector<std::int64_t>{1, 2})) ==
        "Widget 'w': key 'group_01' is not numbered (valid: group_0, group_1, ...)");
  CHECK_THAT(messageOf(with("group_x", std::vector<std::int64_t>{1, 2})),
             Contains("key 'group_x' is not numbered"));
  CHECK(messageOf(with("group_0", std::vector<std::int64_t>{1})) ==
        "Widget 'w': group_0 holds 1 value(s) (valid: 2..4)");
}

TEST_CASE("NaN is refused by a number without bounds, with a range to read", "[parameters]") {
  const ParameterSchema free("Free", "a number", {ParameterSpec::real("speed").byDefault(-1.0)});
  CHECK_THROWS_WITH(free.validate(Parameters{{"speed", std::nan("")}}, "Free 'f'"),
                    "Free 'f': speed nan is invalid (valid: a number, not NaN)");
  CHECK(free.validate(Parameters{{"speed", 2.5}}, "Free 'f'").getDouble("speed") == 2.5);
}

TEST_CASE("help lists every key with its type, unit, range and default", "[parameters]") {
  const std::string help = schema().help("");
  CHECK_THAT(help, Contains("width (an integer, in ps, 1..1000, default 10): bin width"));
  CHECK_THAT(help, Contains("channels (a list of channels, required): inputs"));
  CHECK_THAT(help, Contains("reference (a channel, optional)"));
  CHECK_THAT(help, Contains("group_0, group_1, ..."));
  CHECK(schema().units() == std::vector<std::pair<std::string, std::string>>{{"width", "ps"}});
}
