#include "sources/poisson_superposition.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>

namespace tagflow::synthetic {

PoissonSuperposition::PoissonSuperposition(const std::vector<Channel>& channels,
                                           timestamp_t start_ps, SplitMix64& seeder)
    : random_(seeder) {
  double total_hz = 0;
  for (const Channel& c : channels) total_hz += c.rate_hz;
  mean_gap_ps_ = 1e12 / total_hz;

  // Vose's alias table: every bucket holds 1 / n of the probability, its own channel's share
  // topped up from one channel with more than its bucket.
  const std::size_t n = std::max<std::size_t>(2, std::bit_ceil(channels.size()));
  bucket_shift_ = 64 - std::countr_zero(n);
  position_mask_ = (std::uint64_t{1} << bucket_shift_) - 1;
  const double position_range = static_cast<double>(std::uint64_t{1} << bucket_shift_);
  std::vector<double> share(n, 0.0);  // in units of one bucket
  // The first 8 bytes of a TimeTag: type, reserved and missed_events 0, then the channel.
  const auto head = [](channel_t channel) {
    return std::uint64_t{static_cast<std::uint32_t>(channel)} << 32;
  };
  std::vector<std::uint64_t> owner(n, head(channels.front().channel));
  for (std::size_t i = 0; i < channels.size(); ++i) {
    share[i] = channels[i].rate_hz / total_hz * static_cast<double>(n);
    owner[i] = head(channels[i].channel);
  }
  std::vector<std::size_t> small, large;
  for (std::size_t i = 0; i < n; ++i) (share[i] < 1 ? small : large).push_back(i);
  buckets_.resize(n);
  while (!small.empty() && !large.empty()) {
    const std::size_t s = small.back(), l = large.back();
    small.pop_back();
    large.pop_back();
    buckets_[s] = {static_cast<std::uint64_t>(share[s] * position_range), owner[s], owner[l], 0};
    share[l] -= 1 - share[s];
    (share[l] < 1 ? small : large).push_back(l);
  }
  // What is left holds a full bucket up to rounding: it keeps its channel.
  for (const std::size_t i : small) buckets_[i] = {position_mask_ + 1, owner[i], owner[i], 0};
  for (const std::size_t i : large) buckets_[i] = {position_mask_ + 1, owner[i], owner[i], 0};

  RandomStream::Reader draws(random_);
  next_time_ = start_ps + gapPs(draws.exponential(), mean_gap_ps_);
}

void PoissonSuperposition::appendBefore(timestamp_t until, TagRun& out) {
  constexpr std::size_t kChunk = 1024;
  while (next_time_ < until) out.grow(fill(out.room(kChunk), kChunk, until));
}

std::size_t PoissonSuperposition::fill(Tag* tags, std::size_t capacity, timestamp_t until) {
  RandomStream::Reader draws(random_);
  timestamp_t time = next_time_;
  std::size_t count = 0;
  while (count < capacity && time < until) {
    const std::span<const std::uint64_t> words = draws.remaining(2);
    const FastPathRun run =
        fillOnFastPath(words.data(), words.size() / 2, tags + count, capacity - count, until, time);
    draws.drawn(2 * run.events);
    count += run.events;
    if (run.off_fast_path) {
      time += gapPs(draws.exponential(words[2 * run.events + 1]), mean_gap_ps_);
      draws.drawn(2);
      ++count;
    }
  }
  next_time_ = time;
  return count;
}

PoissonSuperposition::FastPathRun PoissonSuperposition::fillOnFastPath(
    const std::uint64_t* words, std::size_t pairs, Tag* __restrict tags, std::size_t capacity,
    timestamp_t until, timestamp_t& time) const {
  const AliasBucket* const buckets = buckets_.data();
  const int bucket_shift = bucket_shift_;
  const std::uint64_t position_mask = position_mask_;
  const double mean_gap_ps = mean_gap_ps_;
  const ZigguratTables& ziggurat = exponentialZiggurat();
  const std::size_t events = std::min(pairs, capacity);
  timestamp_t t = time;
  FastPathRun run;
  for (; run.events < events && t < until; ++run.events) {
    const std::uint64_t channel_word = words[2 * run.events];
    const std::uint64_t gap_word = words[2 * run.events + 1];
    const AliasBucket& bucket = buckets[channel_word >> bucket_shift];
    const std::uint64_t head =
        (channel_word & position_mask) < bucket.keep_below ? bucket.kept_head : bucket.alias_head;
    std::memcpy(reinterpret_cast<std::byte*>(&tags[run.events]), &head, sizeof head);
    tags[run.events].time = t;
    if (!ziggurat.onFastPath(gap_word)) {
      run.off_fast_path = true;
      break;
    }
    t += gapPs(ziggurat.x(gap_word), mean_gap_ps);
  }
  time = t;
  return run;
}

}  // namespace tagflow::synthetic
