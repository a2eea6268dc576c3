#include "sources/bulk_draws.hpp"

#include <algorithm>

namespace tagflow::synthetic {

namespace {

// The times from the front of `times` whose word is on the normal ziggurat's fast path, each
// given its jitter; returns how many (fewer than `count` where a word leaves the fast path).
[[gnu::noinline]] std::size_t addNormalsOnFastPath(const std::uint64_t* words, std::size_t count,
                                                   double sigma, timestamp_t offset,
                                                   timestamp_t* times) {
  const ZigguratTables& normal = normalZiggurat();
  std::size_t done = 0;
  for (; done < count; ++done) {
    const std::uint64_t word = words[done];
    if (!normal.onFastPath(word)) break;
    times[done] += offset + roundToPs(sigma * withSignOf(word, normal.x(word)));
  }
  return done;
}

}  // namespace

void addRoundedNormals(RandomStream::Reader& draws, double sigma, timestamp_t offset,
                       std::span<timestamp_t> times) {
  if (!(sigma > 0)) {
    for (timestamp_t& time : times) time += offset;
    return;
  }
  std::size_t done = 0;
  while (done < times.size()) {
    const std::span<const std::uint64_t> words = draws.remaining(1);
    const std::size_t count = std::min(words.size(), times.size() - done);
    const std::size_t fast =
        addNormalsOnFastPath(words.data(), count, sigma, offset, times.data() + done);
    draws.drawn(fast);
    done += fast;
    if (fast < count) {
      times[done++] += offset + roundToPs(sigma * draws.truncatedNormal(words[fast]));
      draws.drawn(1);
    }
  }
}

std::size_t keepWithWordBelow(RandomStream::Reader& draws, std::uint64_t below,
                              std::span<const timestamp_t> times, timestamp_t* kept) {
  // Without a branch per time: whether a time is kept is random.
  std::size_t kept_count = 0;
  std::size_t done = 0;
  while (done < times.size()) {
    const std::span<const std::uint64_t> words = draws.remaining(1);
    const std::size_t count = std::min(words.size(), times.size() - done);
    for (std::size_t i = 0; i < count; ++i) {
      kept[kept_count] = times[done + i];
      kept_count += words[i] < below;
    }
    draws.drawn(count);
    done += count;
  }
  return kept_count;
}

}  // namespace tagflow::synthetic
