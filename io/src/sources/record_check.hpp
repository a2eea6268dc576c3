// checkRecords: the pass a reader of raw records makes over each run it reads, while the run is
// in cache: are the types known (0..kMaxTagType) and the times non-decreasing, the first not
// earlier than `previous`, and where are the special tags (every tag but a TimeTag). Their
// indices, `first_index` plus the position in the run, are appended to `specials`. Returns
// false if any record is bad; `specials` may then hold some of the run's indices, and the
// caller finds the bad record again to name it. With AVX2, four records at a time without a
// branch per record, and special tags looked for only in the groups of 16 that hold one: the
// records are then checked at about the speed of a plain scan, where a loop with a branch per
// record took as long as the system took to copy them from the page cache.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow {

bool checkRecords(std::span<const Tag> records, timestamp_t previous, std::size_t first_index,
                  std::vector<std::size_t>& specials);

}  // namespace tagflow
