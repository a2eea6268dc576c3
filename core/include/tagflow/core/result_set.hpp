// ResultSet: what a measurement hands out for saving: named N-dimensional arrays (row-major)
// with a unit, plus the parameters that produced them and scalar facts about the run.
// Measurements build it; io/ writes it (HDF5) without knowing any concrete measurement.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tagflow/core/parameters.hpp"

namespace tagflow {

using ArrayData = std::variant<std::vector<std::int64_t>, std::vector<std::uint64_t>,
                               std::vector<double>, std::vector<std::int8_t>>;

struct ResultArray {
  std::string name;  // snake_case, the getter's name
  std::string unit;  // "ps", "Hz", "counts", "1" for dimensionless
  std::vector<std::size_t> shape;
  ArrayData data;
  std::string description;
};

struct ResultSet {
  std::string kind;  // e.g. "Counter"
  std::string name;  // unique within a graph, the HDF5 group name
  Parameters parameters;
  std::vector<std::pair<std::string, std::string>> parameter_units;  // key, unit ("ps", "Hz")
  std::vector<ResultArray> arrays;
  Parameters facts;  // capture_duration_ps, overflow counts, ...

  template <typename T>
  void add(std::string array_name, std::string unit, std::vector<std::size_t> shape,
           std::vector<T> data, std::string description) {
    arrays.push_back(ResultArray{std::move(array_name), std::move(unit), std::move(shape),
                                 std::move(data), std::move(description)});
  }

  const ResultArray& array(const std::string& array_name) const;
  // The values of an array of `expected_size` elements of type T; throws InvalidArgument
  // naming the array when it is missing, of another type or of another size.
  template <typename T>
  const std::vector<T>& values(const std::string& array_name, std::size_t expected_size) const {
    const ResultArray& found = array(array_name);
    const auto* data = std::get_if<std::vector<T>>(&found.data);
    if (data == nullptr || data->size() != expected_size) throwMismatch(array_name, expected_size);
    return *data;
  }

 private:
  [[noreturn]] void throwMismatch(const std::string& array_name, std::size_t expected_size) const;
};

}  // namespace tagflow
