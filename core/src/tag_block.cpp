#include "tagflow/core/tag_block.hpp"

namespace tagflow {

void BlockBuffer::publishStorage() {
  tags = storage;
  indexSpecialTags();
}

void BlockBuffer::indexSpecialTags() {
  special.clear();
  for (std::size_t i = 0; i < tags.size(); ++i) {
    if (tags[i].type != TagType::TimeTag) special.push_back(static_cast<std::uint32_t>(i));
  }
}

std::size_t blockSplitPoint(std::span<const Tag> tags, std::size_t max_tags) {
  if (tags.size() <= max_tags) return tags.size();
  std::size_t count = max_tags;
  while (count > 0 && tags[count - 1].time == tags[count].time) --count;
  if (count > 0) return count;
  count = max_tags;
  while (count < tags.size() && tags[count].time == tags[0].time) ++count;
  return count;
}

}  // namespace tagflow
