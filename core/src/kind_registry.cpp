#include "tagflow/core/kind_registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tagflow/core/error.hpp"

namespace tagflow {

channel_t channelArgument(const Parameters& checked, std::string_view key) {
  return static_cast<channel_t>(checked.getInt(key));
}

std::vector<channel_t> channelListArgument(const Parameters& checked, std::string_view key) {
  const auto values = checked.getIntList(key);
  return std::vector<channel_t>(values.begin(), values.end());
}

void throwUnknownKind(std::string_view what, std::string_view kind,
                      const std::vector<std::string>& valid) {
  throw InvalidArgument(
      fmt::format("unknown {} kind '{}' (valid: {})", what, kind, fmt::join(valid, ", ")));
}

void requireSplitsByTime(const NodeKind<Measurement>& kind) {
  if (!kind.splits_by_time) {
    throw InvalidArgument(kind.kind() +
                          " cannot be split by time (it runs as one; valid: parallel = 1)");
  }
}

}  // namespace tagflow
