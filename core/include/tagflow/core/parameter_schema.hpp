// ParameterSchema: the settings of one kind (a measurement, a virtual channel, a source)
// declared once, each key with its type, unit, valid range, default and help. Everything that
// deals with settings derives from it: validation (the one place that reports a bad value,
// naming the key, the value and the valid range, for C++, configuration files and Python
// alike), the defaults filled in, the `--help` text, the units stored with the parameters in
// the results file and the keyword arguments of the Python bindings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tagflow/core/parameters.hpp"

namespace tagflow {

enum class ParameterType {
  Integer,
  Real,
  Boolean,
  Text,
  Channel,
  ChannelList,
  IntegerList,
  RealList,
};

std::string_view parameterTypeDescription(ParameterType type);

// One key. Built by chaining, e.g.
//   ParameterSpec::integer("binwidth").unit("ps").atLeast(1).byDefault(1'000'000'000)
//       .help("bin width")
// A key without a default is required unless marked optional().
class ParameterSpec {
 public:
  static ParameterSpec integer(std::string name) {
    return {std::move(name), ParameterType::Integer};
  }
  static ParameterSpec real(std::string name) { return {std::move(name), ParameterType::Real}; }
  static ParameterSpec boolean(std::string name) {
    return {std::move(name), ParameterType::Boolean};
  }
  static ParameterSpec text(std::string name) { return {std::move(name), ParameterType::Text}; }
  static ParameterSpec channel(std::string name) {
    return {std::move(name), ParameterType::Channel};
  }
  static ParameterSpec channels(std::string name) {
    return {std::move(name), ParameterType::ChannelList};
  }
  static ParameterSpec integers(std::string name) {
    return {std::move(name), ParameterType::IntegerList};
  }
  static ParameterSpec reals(std::string name) {
    return {std::move(name), ParameterType::RealList};
  }

  ParameterSpec unit(std::string unit) const;
  // Bounds of the value, or of each element of a list.
  ParameterSpec atLeast(double bound) const;
  ParameterSpec atMost(double bound) const;
  ParameterSpec above(double bound) const;  // exclusive
  // Bounds of the number of elements of a list.
  ParameterSpec sizeBetween(std::size_t min, std::size_t max) const;
  ParameterSpec oneOf(std::vector<std::string> choices) const;
  ParameterSpec byDefault(ParameterValue value) const;
  ParameterSpec optional() const;
  // The key is a family name_0, name_1, ... given in sequence, each of this type.
  ParameterSpec numbered() const;
  ParameterSpec help(std::string text) const;

  const std::string& name() const { return name_; }
  ParameterType type() const { return type_; }
  const std::string& unitName() const { return unit_; }
  const std::string& helpText() const { return help_; }
  const std::optional<ParameterValue>& defaultValue() const { return default_; }
  const std::vector<std::string>& choices() const { return choices_; }
  bool isRequired() const { return !default_ && !optional_; }
  bool isNumbered() const { return numbered_; }
  // "1..1000000", ">= 1", "> 0", "one of: a, b"; empty when anything of the type is valid.
  std::string rangeText() const;

  // Throws InvalidArgument naming `owner`, the key, the value and the valid range. Integers
  // are accepted where a number is expected.
  ParameterValue check(const ParameterValue& value, std::string_view owner,
                       std::string_view key) const;

 private:
  ParameterSpec(std::string name, ParameterType type) : name_(std::move(name)), type_(type) {}
  // long double holds every int64 and every double exactly, so integers compare exactly.
  void checkNumber(long double value, std::string_view owner, std::string_view key,
                   const std::string& shown) const;

  std::string name_;
  ParameterType type_;
  std::string unit_;
  std::string help_;
  std::optional<ParameterValue> default_;
  std::optional<double> min_, max_;
  bool min_exclusive_ = false;
  std::size_t min_size_ = 0, max_size_ = SIZE_MAX;
  std::vector<std::string> choices_;
  bool optional_ = false;
  bool numbered_ = false;
};

class ParameterSchema {
 public:
  ParameterSchema(std::string kind, std::string summary, std::vector<ParameterSpec> keys);

  const std::string& kind() const { return kind_; }
  const std::string& summary() const { return summary_; }
  const std::vector<ParameterSpec>& keys() const { return keys_; }
  const ParameterSpec* find(std::string_view key) const;

  // The given parameters checked against the declaration (unknown keys, missing ones, types,
  // ranges), in declaration order with the defaults filled in. `owner` names the instance in
  // messages, e.g. "Counter 'counter'".
  Parameters validate(const Parameters& given, std::string_view owner) const;

  // The units of the keys that have one, for the results file.
  std::vector<std::pair<std::string, std::string>> units() const;

  // One line per key: "name (type, unit, range, default): help", indented by `indent`.
  std::string help(std::string_view indent = "      ") const;

 private:
  std::string kind_;
  std::string summary_;
  std::vector<ParameterSpec> keys_;
};

}  // namespace tagflow
