#include "tagflow/core/result_set.hpp"

#include "tagflow/core/error.hpp"

namespace tagflow {

const ResultArray& ResultSet::array(const std::string& array_name) const {
  for (const auto& entry : arrays) {
    if (entry.name == array_name) return entry;
  }
  throw InvalidArgument("result set '" + name + "' has no array '" + array_name + "'");
}

}  // namespace tagflow
