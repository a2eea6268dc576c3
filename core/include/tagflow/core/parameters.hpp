// Parameters: the named, typed settings of a measurement or source, in the order given.
// They come from a config file or from C++, and go unchanged into the HDF5 file as
// attributes, so a result always carries what produced it. Getters throw InvalidArgument
// naming the key and the expected type when a key is missing or of the wrong type.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tagflow {

// A list of strings only comes from a configuration file, where a channel may be named by the
// virtual channel that produces it; the names are resolved to numbers before a node is built.
using ParameterValue =
    std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>,
                 std::vector<double>, std::vector<std::string>>;

class Parameters {
 public:
  Parameters() = default;
  Parameters(std::initializer_list<std::pair<std::string, ParameterValue>> entries);

  // Sets `key`, replacing an earlier value of the same key in place.
  Parameters& set(std::string key, ParameterValue value);

  bool contains(std::string_view key) const;
  const ParameterValue& at(std::string_view key) const;

  std::int64_t getInt(std::string_view key) const;
  std::int64_t getInt(std::string_view key, std::int64_t fallback) const;
  double getDouble(std::string_view key) const;  // integers are accepted too
  double getDouble(std::string_view key, double fallback) const;
  bool getBool(std::string_view key, bool fallback) const;
  std::string getString(std::string_view key) const;
  std::string getString(std::string_view key, std::string fallback) const;
  std::vector<std::int64_t> getIntList(std::string_view key) const;

  // Throws InvalidArgument naming the first key that is not in `allowed`.
  void requireOnly(std::initializer_list<std::string_view> allowed, std::string_view owner) const;

  const std::vector<std::pair<std::string, ParameterValue>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, ParameterValue>> entries_;
};

std::string_view parameterTypeName(const ParameterValue& value);
std::string formatParameter(const ParameterValue& value);

}  // namespace tagflow
