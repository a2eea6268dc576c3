#include "tagflow/core/result_set.hpp"

#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow {

const ResultArray& ResultSet::array(const std::string& array_name) const {
  for (const auto& entry : arrays) {
    if (entry.name == array_name) return entry;
  }
  throw InvalidArgument("result set '" + name + "' has no array '" + array_name + "'");
}

void ResultSet::throwMismatch(const std::string& array_name, std::size_t expected_size) const {
  throw InvalidArgument("result set '" + name + "': array '" + array_name +
                        "' does not have the expected type and size " +
                        std::to_string(expected_size));
}

}  // namespace tagflow
