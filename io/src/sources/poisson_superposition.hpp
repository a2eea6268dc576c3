// PoissonSuperposition: every Poisson channel of a synthetic stream, drawn as one process.
// Independent Poisson processes of rates r_1..r_n are, jointly, one Poisson process of the
// total rate R whose events belong to channel i with probability r_i / R, independently of one
// another and of the times (the superposition and marking theorems): the same joint
// distribution as n separate channels. Drawn that way the events come out in time order, so
// the channels need no merging, and an event costs one exponential gap and one channel draw
// whatever the number of channels. The channel is drawn by Walker's alias method (Vose's
// construction, 1991): one word, one table bucket, one comparison.
// Gaps are rounded to whole picoseconds and are at least 1 ps, so no two events share a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sources/random_draws.hpp"
#include "sources/sorted_runs.hpp"
#include "tagflow/core/tag.hpp"

namespace tagflow::synthetic {

class PoissonSuperposition {
 public:
  struct Channel {
    channel_t channel = 0;
    double rate_hz = 0;
  };

  // The process starts at `start_ps`: its first event lies one exponential gap later. Its
  // random stream takes its seeds from `seeder`. `channels` must not be empty and every rate
  // must be positive.
  PoissonSuperposition(const std::vector<Channel>& channels, timestamp_t start_ps,
                       SplitMix64& seeder);

  // Appends the events before `until` to `out`, in time order.
  void appendBefore(timestamp_t until, TagRun& out);

 private:
  // A bucket keeps its own channel for the low word bits below `keep_below`, else gives the
  // alias; buckets beyond the channels (the count is rounded up to a power of two) always
  // give the alias. The channels are held as the first 8 bytes of their TimeTag.
  struct AliasBucket {
    std::uint64_t keep_below = 0;
    std::uint64_t kept_head = 0;
    std::uint64_t alias_head = 0;
    std::uint64_t unused = 0;  // a power-of-two size
  };

  // Writes the events before `until`, at most `capacity`; returns how many.
  std::size_t fill(Tag* tags, std::size_t capacity, timestamp_t until);

  struct FastPathRun {
    std::size_t events = 0;      // written, their gaps added to the time
    bool off_fast_path = false;  // the next event is written, its gap is the caller's to draw
  };
  // The hot loop: events from the pairs of `words` (a word for the channel, one for the gap to
  // the next event) while the gaps are on the ziggurat's fast path, before `until` and
  // `capacity`. It calls nothing, so that its values keep their registers. `tags` is restrict:
  // a Tag has byte fields, which may alias anything, and the compiler would otherwise reload
  // every table field after every tag it stores.
  [[gnu::noinline]] FastPathRun fillOnFastPath(const std::uint64_t* words, std::size_t pairs,
                                               Tag* __restrict tags, std::size_t capacity,
                                               timestamp_t until, timestamp_t& time) const;

  // An exponential of unit mean as a gap in ps: rounded to the nearest picosecond (the value
  // is positive: truncating x + 0.5 rounds), at least 1.
  static timestamp_t gapPs(double unit_gap, double mean_gap_ps) {
    return std::max<timestamp_t>(1, static_cast<timestamp_t>(unit_gap * mean_gap_ps + 0.5));
  }

  std::vector<AliasBucket> buckets_;
  int bucket_shift_ = 0;  // the bucket is the word's high bits, the rest its position
  std::uint64_t position_mask_ = 0;
  double mean_gap_ps_ = 0;
  timestamp_t next_time_ = 0;
  RandomStream random_;
};

}  // namespace tagflow::synthetic
