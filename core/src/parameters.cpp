#include "tagflow/core/parameters.hpp"

#include <algorithm>
#include <sstream>

#include "tagflow/core/error.hpp"

namespace tagflow {

Parameters::Parameters(std::initializer_list<std::pair<std::string, ParameterValue>> entries) {
  for (const auto& [key, value] : entries) set(key, value);
}

Parameters& Parameters::set(std::string key, ParameterValue value) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const auto& entry) { return entry.first == key; });
  if (it != entries_.end()) {
    it->second = std::move(value);
  } else {
    entries_.emplace_back(std::move(key), std::move(value));
  }
  return *this;
}

bool Parameters::contains(std::string_view key) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const auto& entry) { return entry.first == key; });
}

const ParameterValue& Parameters::at(std::string_view key) const {
  for (const auto& [name, value] : entries_) {
    if (name == key) return value;
  }
  throw InvalidArgument("missing key '" + std::string(key) + "'");
}

namespace {

[[noreturn]] void wrongType(std::string_view key, std::string_view expected,
                            const ParameterValue& value) {
  throw InvalidType("key '" + std::string(key) + "' must be " + std::string(expected) + ", got " +
                    std::string(parameterTypeName(value)) + " " + formatParameter(value));
}

}  // namespace

std::int64_t Parameters::getInt(std::string_view key) const {
  const auto& value = at(key);
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return *integer;
  wrongType(key, "an integer", value);
}

std::int64_t Parameters::getInt(std::string_view key, std::int64_t fallback) const {
  return contains(key) ? getInt(key) : fallback;
}

double Parameters::getDouble(std::string_view key) const {
  const auto& value = at(key);
  if (const auto* real = std::get_if<double>(&value)) return *real;
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return static_cast<double>(*integer);
  wrongType(key, "a number", value);
}

double Parameters::getDouble(std::string_view key, double fallback) const {
  return contains(key) ? getDouble(key) : fallback;
}

bool Parameters::getBool(std::string_view key, bool fallback) const {
  if (!contains(key)) return fallback;
  const auto& value = at(key);
  if (const auto* flag = std::get_if<bool>(&value)) return *flag;
  wrongType(key, "true or false", value);
}

std::string Parameters::getString(std::string_view key) const {
  const auto& value = at(key);
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  wrongType(key, "a string", value);
}

std::string Parameters::getString(std::string_view key, std::string fallback) const {
  return contains(key) ? getString(key) : fallback;
}

std::vector<std::int64_t> Parameters::getIntList(std::string_view key) const {
  const auto& value = at(key);
  if (const auto* list = std::get_if<std::vector<std::int64_t>>(&value)) return *list;
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return {*integer};
  wrongType(key, "a list of integers", value);
}

void Parameters::requireOnly(std::initializer_list<std::string_view> allowed,
                             std::string_view owner) const {
  for (const auto& entry : entries_) {
    if (std::find(allowed.begin(), allowed.end(), entry.first) == allowed.end()) {
      std::string valid;
      for (auto name : allowed) valid += (valid.empty() ? "" : ", ") + std::string(name);
      throw InvalidArgument("unknown key '" + entry.first + "' for " + std::string(owner) +
                            " (valid keys: " + valid + ")");
    }
  }
}

std::string_view parameterTypeName(const ParameterValue& value) {
  constexpr std::string_view names[] = {"integer",  "number",      "boolean",    "string",
                                        "int list", "number list", "string list"};
  return names[value.index()];
}

std::string formatParameter(const ParameterValue& value) {
  std::ostringstream out;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          out << '"' << v << '"';
        } else if constexpr (std::is_same_v<T, bool>) {
          out << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> ||
                             std::is_same_v<T, std::vector<double>> ||
                             std::is_same_v<T, std::vector<std::string>>) {
          out << '[';
          for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
          out << ']';
        } else {
          out << v;
        }
      },
      value);
  return out.str();
}

}  // namespace tagflow
