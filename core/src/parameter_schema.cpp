#include "tagflow/core/parameter_schema.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

// Whole numbers in full (a bound of 2^52 shown as 4.5035996273705e+15 looks like a value above
// it), others to 15 digits (0.1, not 0.10000000000000001).
std::string number(double value) {
  if (std::trunc(value) == value && std::abs(value) < 0x1p63) {
    return fmt::format("{}", static_cast<std::int64_t>(value));
  }
  return fmt::format("{:.15g}", value);
}

bool isList(ParameterType type) {
  return type == ParameterType::ChannelList || type == ParameterType::IntegerList ||
         type == ParameterType::RealList;
}

[[noreturn]] void wrongType(std::string_view owner, std::string_view key, ParameterType expected,
                            const ParameterValue& value) {
  throw InvalidType(fmt::format("{}: key '{}' must be {}, got {} {}", owner, key,
                                parameterTypeDescription(expected), parameterTypeName(value),
                                formatParameter(value)));
}

// Where a configuration names channels by the virtual channel that produces them, the names
// are resolved before validation; a list that still holds one is an unknown channel name.
std::vector<std::int64_t> integersOf(const ParameterValue& value, std::string_view owner,
                                     std::string_view key, ParameterType expected) {
  if (const auto* list = std::get_if<std::vector<std::int64_t>>(&value)) return *list;
  if (const auto* single = std::get_if<std::int64_t>(&value)) return {*single};
  // An empty list has no element type to tell: [] in a file reads as a list of numbers.
  if (const auto* reals = std::get_if<std::vector<double>>(&value); reals && reals->empty()) {
    return {};
  }
  wrongType(owner, key, expected, value);
}

}  // namespace

std::string_view parameterTypeDescription(ParameterType type) {
  switch (type) {
    case ParameterType::Integer:
      return "an integer";
    case ParameterType::Real:
      return "a number";
    case ParameterType::Boolean:
      return "a boolean";
    case ParameterType::Text:
      return "a string";
    case ParameterType::Channel:
      return "a channel";
    case ParameterType::ChannelList:
      return "a list of channels";
    case ParameterType::IntegerList:
      return "a list of integers";
    case ParameterType::RealList:
      return "a list of numbers";
  }
  return "a value";
}

ParameterSpec ParameterSpec::unit(std::string unit) const {
  ParameterSpec spec = *this;
  spec.unit_ = std::move(unit);
  return spec;
}

ParameterSpec ParameterSpec::atLeast(double bound) const {
  ParameterSpec spec = *this;
  spec.min_ = bound;
  spec.min_exclusive_ = false;
  return spec;
}

ParameterSpec ParameterSpec::atMost(double bound) const {
  ParameterSpec spec = *this;
  spec.max_ = bound;
  return spec;
}

ParameterSpec ParameterSpec::above(double bound) const {
  ParameterSpec spec = *this;
  spec.min_ = bound;
  spec.min_exclusive_ = true;
  return spec;
}

ParameterSpec ParameterSpec::sizeBetween(std::size_t min, std::size_t max) const {
  ParameterSpec spec = *this;
  spec.min_size_ = min;
  spec.max_size_ = max;
  return spec;
}

ParameterSpec ParameterSpec::oneOf(std::vector<std::string> choices) const {
  ParameterSpec spec = *this;
  spec.choices_ = std::move(choices);
  return spec;
}

ParameterSpec ParameterSpec::byDefault(ParameterValue value) const {
  ParameterSpec spec = *this;
  spec.default_ = std::move(value);
  return spec;
}

ParameterSpec ParameterSpec::optional() const {
  ParameterSpec spec = *this;
  spec.optional_ = true;
  return spec;
}

ParameterSpec ParameterSpec::numbered() const {
  ParameterSpec spec = *this;
  spec.numbered_ = true;
  spec.optional_ = true;
  return spec;
}

ParameterSpec ParameterSpec::help(std::string text) const {
  ParameterSpec spec = *this;
  spec.help_ = std::move(text);
  return spec;
}

std::string ParameterSpec::rangeText() const {
  if (!choices_.empty()) return fmt::format("one of: {}", fmt::join(choices_, ", "));
  if (min_ && max_ && !min_exclusive_) return number(*min_) + ".." + number(*max_);
  std::string text;
  if (min_) text = (min_exclusive_ ? "> " : ">= ") + number(*min_);
  if (max_) text += (text.empty() ? "<= " : " and <= ") + number(*max_);
  return text;
}

void ParameterSpec::checkNumber(long double value, std::string_view owner, std::string_view key,
                                const std::string& shown) const {
  const bool below = min_ && (min_exclusive_ ? !(value > *min_) : !(value >= *min_));
  const bool beyond = max_ && !(value <= *max_);
  if (below || beyond || std::isnan(value)) {
    const std::string range = rangeText();
    throw InvalidArgument(fmt::format("{}: {} {}{} is invalid (valid: {})", owner, key, shown,
                                      unit_.empty() ? "" : " " + unit_,
                                      range.empty() ? "a number, not NaN" : range));
  }
}

ParameterValue ParameterSpec::check(const ParameterValue& value, std::string_view owner,
                                    std::string_view key) const {
  if (isList(type_)) {
    std::size_t size = 0;
    ParameterValue checked;
    if (type_ == ParameterType::RealList) {
      std::vector<double> reals;
      if (const auto* list = std::get_if<std::vector<double>>(&value)) {
        reals = *list;
      } else {
        for (std::int64_t v : integersOf(value, owner, key, type_))
          reals.push_back(static_cast<double>(v));
      }
      for (double v : reals) checkNumber(v, owner, key, number(v));
      size = reals.size();
      checked = std::move(reals);
    } else {
      auto integers = integersOf(value, owner, key, type_);
      for (std::int64_t v : integers) {
        if (type_ == ParameterType::ChannelList && (v < std::numeric_limits<std::int32_t>::min() ||
                                                    v > std::numeric_limits<std::int32_t>::max())) {
          throw InvalidArgument(fmt::format(
              "{}: key '{}': channel {} is out of range (valid: 32-bit signed integers)", owner,
              key, v));
        }
        checkNumber(static_cast<long double>(v), owner, key, std::to_string(v));
      }
      size = integers.size();
      checked = std::move(integers);
    }
    if (size < min_size_ || size > max_size_) {
      const std::string valid = max_size_ == SIZE_MAX ? fmt::format("at least {}", min_size_)
                                                      : fmt::format("{}..{}", min_size_, max_size_);
      throw InvalidArgument(
          fmt::format("{}: {} holds {} value(s) (valid: {})", owner, key, size, valid));
    }
    return checked;
  }
  switch (type_) {
    case ParameterType::Boolean:
      if (!std::holds_alternative<bool>(value)) wrongType(owner, key, type_, value);
      return value;
    case ParameterType::Text: {
      const auto* text = std::get_if<std::string>(&value);
      if (text == nullptr) wrongType(owner, key, type_, value);
      // C interfaces (a file's path) would end the text there and use what is before it.
      if (const auto nul = text->find('\0'); nul != std::string::npos) {
        throw InvalidArgument(
            fmt::format("{}: {} holds a NUL character at position {} (valid: text without one)",
                        owner, key, nul));
      }
      if (!choices_.empty() &&
          std::find(choices_.begin(), choices_.end(), *text) == choices_.end()) {
        throw InvalidArgument(fmt::format("{}: {} '{}' is invalid (valid: {})", owner, key, *text,
                                          fmt::join(choices_, ", ")));
      }
      return value;
    }
    case ParameterType::Real: {
      double real = 0;
      if (const auto* d = std::get_if<double>(&value)) {
        real = *d;
      } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
        real = static_cast<double>(*i);
      } else {
        wrongType(owner, key, type_, value);
      }
      checkNumber(real, owner, key, number(real));
      return real;
    }
    default: {
      const auto* integer = std::get_if<std::int64_t>(&value);
      if (integer == nullptr) wrongType(owner, key, type_, value);
      if (type_ == ParameterType::Channel &&
          (*integer < std::numeric_limits<std::int32_t>::min() ||
           *integer > std::numeric_limits<std::int32_t>::max())) {
        throw InvalidArgument(
            fmt::format("{}: key '{}': channel {} is out of range (valid: 32-bit signed integers)",
                        owner, key, *integer));
      }
      checkNumber(static_cast<long double>(*integer), owner, key, std::to_string(*integer));
      return value;
    }
  }
}

ParameterSchema::ParameterSchema(std::string kind, std::string summary,
                                 std::vector<ParameterSpec> keys)
    : kind_(std::move(kind)), summary_(std::move(summary)), keys_(std::move(keys)) {}

const ParameterSpec* ParameterSchema::find(std::string_view key) const {
  for (const auto& spec : keys_) {
    if (spec.name() == key) return &spec;
  }
  return nullptr;
}

Parameters ParameterSchema::validate(const Parameters& given, std::string_view owner) const {
  const auto numberedSpec = [&](const std::string& key) -> const ParameterSpec* {
    for (const auto& spec : keys_) {
      if (spec.isNumbered() && key.rfind(spec.name() + "_", 0) == 0) return &spec;
    }
    return nullptr;
  };
  for (const auto& [key, value] : given.entries()) {
    if (find(key) == nullptr && numberedSpec(key) == nullptr) {
      std::vector<std::string> valid;
      for (const auto& spec : keys_)
        valid.push_back(spec.isNumbered() ? spec.name() + "_0, " + spec.name() + "_1, ..."
                                          : spec.name());
      throw InvalidArgument(fmt::format("unknown key '{}' for {} (valid keys: {})", key, owner,
                                        fmt::join(valid, ", ")));
    }
  }
  Parameters checked;
  for (const auto& spec : keys_) {
    if (spec.isNumbered()) {
      // By number, whatever order they were given in (a configuration file's table lists
      // them by name, group_10 before group_2): 0, 1, ... without a gap.
      std::map<std::size_t, std::string> numbered;
      for (const auto& [key, value] : given.entries()) {
        if (numberedSpec(key) != &spec) continue;
        const std::string suffix = key.substr(spec.name().size() + 1);
        std::size_t number = 0;
        const auto [end, error] =
            std::from_chars(suffix.data(), suffix.data() + suffix.size(), number);
        if (error != std::errc() || end != suffix.data() + suffix.size() ||
            std::to_string(number) != suffix) {
          throw InvalidArgument(fmt::format("{}: key '{}' is not numbered (valid: {}_0, {}_1, ...)",
                                            owner, key, spec.name(), spec.name()));
        }
        numbered.emplace(number, key);
      }
      std::size_t expected = 0;
      for (const auto& [number, key] : numbered) {
        if (number != expected) {
          throw InvalidArgument(fmt::format(
              "{}: key '{}' has no {}_{} before it (valid: {}_0, {}_1, ... without a gap)", owner,
              key, spec.name(), expected, spec.name(), spec.name()));
        }
        ++expected;
        checked.set(key, spec.check(given.at(key), owner, key));
      }
      continue;
    }
    if (given.contains(spec.name())) {
      checked.set(spec.name(), spec.check(given.at(spec.name()), owner, spec.name()));
    } else if (spec.defaultValue()) {
      checked.set(spec.name(), *spec.defaultValue());
    } else if (spec.isRequired()) {
      throw InvalidArgument(fmt::format("{}: key '{}' is missing ({}{})", owner, spec.name(),
                                        parameterTypeDescription(spec.type()),
                                        spec.helpText().empty() ? "" : ": " + spec.helpText()));
    }
  }
  return checked;
}

std::vector<std::pair<std::string, std::string>> ParameterSchema::units() const {
  std::vector<std::pair<std::string, std::string>> units;
  for (const auto& spec : keys_) {
    if (!spec.unitName().empty()) units.emplace_back(spec.name(), spec.unitName());
  }
  return units;
}

std::string ParameterSchema::help(std::string_view indent) const {
  std::string text;
  for (const auto& spec : keys_) {
    std::vector<std::string> facts{std::string(parameterTypeDescription(spec.type()))};
    if (!spec.unitName().empty()) facts.push_back("in " + spec.unitName());
    if (const std::string range = spec.rangeText(); !range.empty()) facts.push_back(range);
    if (spec.defaultValue()) {
      facts.push_back("default " + formatParameter(*spec.defaultValue()));
    } else if (spec.isRequired()) {
      facts.push_back("required");
    } else {
      facts.push_back("optional");
    }
    const std::string name =
        spec.isNumbered() ? spec.name() + "_0, " + spec.name() + "_1, ..." : spec.name();
    text += fmt::format("{}{} ({}): {}\n", indent, name, fmt::join(facts, ", "), spec.helpText());
  }
  return text;
}

}  // namespace tagflow
