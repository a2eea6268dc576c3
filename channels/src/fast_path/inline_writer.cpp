#include "fast_path/inline_writer.hpp"

#include <algorithm>
#include <array>

namespace tagflow::fast_path {

Tag* insertByTime(Tag* begin, Tag* end, const Tag& tag) {
  Tag* place = end;
  while (place != begin && place[-1].time > tag.time) --place;
  std::copy_backward(place, end, end + 1);
  *place = tag;
  return end + 1;
}

namespace {

// Puts the input tags of a run of equal times first, in order, the generated ones after.
template <class IsInput>
void partitionRun(Tag* run, Tag* run_end, IsInput is_input) {
  // Runs are a few tags: a stack buffer instead of the allocation of std::stable_partition.
  constexpr std::ptrdiff_t kSmall = 16;
  if (run_end - run > kSmall) {
    std::stable_partition(run, run_end, is_input);
    return;
  }
  std::array<Tag, kSmall> generated;
  std::size_t moved = 0;
  Tag* write = run;
  for (Tag* tag = run; tag != run_end; ++tag) {
    if (is_input(*tag)) {
      *write++ = *tag;
    } else {
      generated[moved++] = *tag;
    }
  }
  std::copy(generated.begin(), generated.begin() + static_cast<std::ptrdiff_t>(moved), write);
}

}  // namespace

void placeGeneratedAfterInput(Tag* begin, Tag* end, channel_t first_output, std::size_t outputs) {
  const auto input = [&](const Tag& tag) {
    return static_cast<std::uint64_t>(std::int64_t{tag.channel} - first_output) >= outputs;
  };
  for (Tag* run = begin; run != end;) {
    Tag* run_end = run + 1;
    while (run_end != end && run_end->time == run->time) ++run_end;
    if (run_end - run > 1) partitionRun(run, run_end, input);
    run = run_end;
  }
}

}  // namespace tagflow::fast_path
