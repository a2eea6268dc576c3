#include "tagflow/measurements/correlation.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr std::int64_t kMaxBins = std::int64_t{1} << 28;
// Offsets into the window stay below 2^52, the range of ExactDivider.
constexpr timestamp_t kMaxWindow = std::int64_t{1} << ExactDivider::kInputBits;

Parameters correlationParameters(channel_t channel_1, channel_t channel_2, timestamp_t binwidth,
                                 std::int64_t n_bins) {
  return Parameters{{"channel_1", std::int64_t{channel_1}},
                    {"channel_2", std::int64_t{channel_2}},
                    {"binwidth", binwidth},
                    {"n_bins", n_bins}};
}

}  // namespace

const ParameterSchema& Correlation::schema() {
  static const ParameterSchema schema(
      "Correlation", "histogram of tau = t(channel_1) - t(channel_2), bins centred on zero, g2",
      {ParameterSpec::channel("channel_1").help("channel whose events come after for tau > 0"),
       ParameterSpec::channel("channel_2")
           .optional()
           .help("reference channel; leave out for an auto-correlation"),
       ParameterSpec::integer("binwidth")
           .unit("ps")
           .atLeast(1)
           .atMost(static_cast<double>(kMaxWindow))
           .byDefault(std::int64_t{1000})
           .help("bin width"),
       ParameterSpec::integer("n_bins")
           .atLeast(1)
           .atMost(static_cast<double>(kMaxBins))
           .byDefault(std::int64_t{1000})
           .help("number of bins")});
  return schema;
}

Correlation::Correlation(std::string name, channel_t channel_1, channel_t channel_2,
                         timestamp_t binwidth, std::int64_t n_bins)
    : Measurement(schema(), std::move(name),
                  correlationParameters(channel_1, channel_2, binwidth, n_bins)),
      channel_1_(channel_1),
      channel_2_(channel_2 == CHANNEL_UNUSED ? channel_1 : channel_2),
      auto_correlation_(channel_2_ == channel_1_),
      binwidth_(binwidth),
      n_bins_(static_cast<std::size_t>(n_bins)) {
  const std::string who = "Correlation '" + this->name() + "'";
  if (channel_1 == CHANNEL_UNUSED) {
    throw InvalidArgument(who + ": channel_1 is CHANNEL_UNUSED (" + std::to_string(CHANNEL_UNUSED) +
                          "); it must name a channel");
  }
  if (binwidth > kMaxWindow / n_bins) {
    throw InvalidArgument(who + ": the window binwidth * n_bins = " + std::to_string(binwidth) +
                          " * " + std::to_string(n_bins) +
                          " ps is too wide (valid: <= " + std::to_string(kMaxWindow) + " ps)");
  }
  const timestamp_t window = binwidth_ * n_bins;
  lowest_ = -(window / 2);
  highest_ = lowest_ + window;
  bin_of_ = LinearBins{lowest_, ExactDivider(static_cast<std::uint64_t>(binwidth_))};
  counts_.assign(n_bins_, 0);
  twin_counts_ = TwinCounts<std::int64_t>(n_bins_);
}

void Correlation::processTimeTags(std::span<const Tag> tags) {
  if (inOverflow()) return;  // events inside an overflow interval are ignored
  // A chunk's times are paired while they are still in the first-level cache, and its pairing
  // runs while the loads that the split's prefetch started arrive: split and pair take turns
  // every kChunkTags tags instead of once per block.
  constexpr std::size_t kChunkTags = 1024;
  const auto shared_1 = sharedTimes(tags, channel_1_);
  const auto shared_2 = sharedTimes(tags, channel_2_);
  if (shared_1 && shared_2) return pairShared(tags, *shared_1, *shared_2, kChunkTags);
  while (!tags.empty()) {
    const std::span<const Tag> chunk = tags.first(std::min(tags.size(), kChunkTags));
    tags = tags.subspan(chunk.size());
    splitChunk(chunk);
    // Every tag before the chunk's last time has been read, as advanceTime() would be told.
    if (!tags.empty()) pairUpTo(chunk.back().time + lowest_);
  }
}

void Correlation::pairShared(std::span<const Tag> tags, std::span<const timestamp_t> times_1,
                             std::span<const timestamp_t> times_2, std::size_t chunk_tags) {
  // The same turns as the split's, each taking the times up to its last tag's time: every tag
  // before that time has then been read, and the pairs are the same as the split's.
  for (std::size_t end = chunk_tags; !times_1.empty() || !times_2.empty(); end += chunk_tags) {
    const bool last = end >= tags.size();
    const timestamp_t through = tags[std::min(end, tags.size()) - 1].time;
    const auto upTo = [through, last](std::span<const timestamp_t>& times) {
      const auto taken = static_cast<std::size_t>(
          last ? times.size()
               : std::upper_bound(times.begin(), times.end(), through) - times.begin());
      const std::span<const timestamp_t> part = times.first(taken);
      times = times.subspan(taken);
      return part;
    };
    const std::span<const timestamp_t> part_1 = upTo(times_1);
    const std::span<const timestamp_t> part_2 = upTo(times_2);
    if (auto_correlation_) {
      appendTimes(part_1, events_);
      events_1_ += part_1.size();
      events_2_ = events_1_;
    } else {
      appendTimes(part_1, pending_1_);
      appendTimes(part_2, window_2_);
      events_1_ += part_1.size();
      events_2_ += part_2.size();
    }
    if (last) return;
    pairUpTo(through + lowest_);
  }
}

void Correlation::splitChunk(std::span<const Tag> tags) {
  if (auto_correlation_) {
    const std::size_t before = events_.size();
    splitChannels(tags, channel_1_, events_, channel_2_, nullptr);
    events_1_ += events_.size() - before;
    events_2_ = events_1_;
    return;
  }
  const std::size_t before_1 = pending_1_.size(), before_2 = window_2_.size();
  splitChannels(tags, channel_1_, pending_1_, channel_2_, &window_2_);
  events_1_ += pending_1_.size() - before_1;
  events_2_ += window_2_.size() - before_2;
}

void Correlation::keepPartners(std::span<const Tag> tags) {
  if (inOverflow()) return;
  TimeWindow& partners = auto_correlation_ ? events_ : window_2_;
  for (const Tag& tag : tags) {
    if (tag.channel == channel_2_) partners.push(tag.time);
  }
}

void Correlation::processLeadIn(std::span<const Tag> tags) {
  keepPartners(tags);
  if (auto_correlation_) cursor_ = events_.size();  // lead-in events are no anchors
}

void Correlation::processLeadOut(std::span<const Tag> tags) {
  keepPartners(tags);
}

void Correlation::pairUpTo(timestamp_t limit) {
  limit = std::min(limit, countedEnd());  // later events are anchors of the next range
  std::int64_t* const counts = counts_.data();
  if (n_bins_ <= CountBatch::kCachedBins) {
    const auto count = [this, counts](std::span<const timestamp_t> taus) {
      twin_counts_.count(taus, counts, bin_of_);
    };
    if (auto_correlation_) {
      pairAutoUpTo(limit, count);
    } else {
      pairCrossUpTo(limit, count);
    }
  } else {
    const auto count = [this, counts](std::span<const timestamp_t> taus) {
      const LinearBins bin_of = bin_of_;  // a local: batch_.add() stores to memory
      for (const timestamp_t tau : taus) batch_.add(bin_of(tau), counts);
    };
    if (auto_correlation_) {
      pairAutoUpTo(limit, count);
    } else {
      pairCrossUpTo(limit, count);
    }
    batch_.countInto(counts);
  }
}

template <class Count>
std::size_t Correlation::pairEvents(std::span<const timestamp_t> events,
                                    std::span<const timestamp_t> partners, Count count) {
  return pairWindows(
      events, partners, 1 - highest_, -lowest_, taus_,
      [](timestamp_t t, const timestamp_t* run, std::size_t pairs, timestamp_t* out) {
        writeDifferences(t, run, pairs, out);
      },
      count);
}

namespace {

// How many of the sorted `times` come before `limit`.
std::size_t countBefore(std::span<const timestamp_t> times, timestamp_t limit) {
  return static_cast<std::size_t>(std::lower_bound(times.begin(), times.end(), limit) -
                                  times.begin());
}

}  // namespace

template <class Count>
void Correlation::pairCrossUpTo(timestamp_t limit, Count count) {
  window_2_.seal();
  const auto events = pending_1_.times();
  const std::size_t done = countBefore(events, limit);
  const std::size_t needed_from = pairEvents(events.first(done), window_2_.times(), count);
  pending_1_.dropFront(done);
  window_2_.dropFront(needed_from);
  // Every held-back event is at or after `limit`: older channel_2 events can never pair again
  // (without this, a silent channel_1 would let them pile up).
  window_2_.dropBefore(limit - highest_ + 1);
}

template <class Count>
void Correlation::pairAutoUpTo(timestamp_t limit, Count count) {
  events_.seal();
  const auto events = events_.times();
  const std::size_t paired = countBefore(events.subspan(cursor_), limit);
  const std::size_t needed_from = pairEvents(events.subspan(cursor_, paired), events, count);
  // An event is its own partner at tau = 0, which always lies in the window: counted with the
  // others, then taken back.
  counts_[bin_of_(0)] -= static_cast<std::int64_t>(paired);
  cursor_ += paired;
  events_.dropFront(needed_from);
  cursor_ -= needed_from;
}

void Correlation::forgetEvents() {
  pending_1_.clear();
  window_2_.clear();
  events_.clear();
  cursor_ = 0;
}

void Correlation::advanceTime(timestamp_t time) {
  if (inOverflow()) overflow_time_ += countedOverlap(last_time_, time);
  last_time_ = time;
  pairUpTo(time + lowest_);
}

void Correlation::onCaptureStart(timestamp_t time, bool) {
  last_time_ = time;
  forgetEvents();
}

void Correlation::onCaptureEnd() {
  pairUpTo(std::numeric_limits<timestamp_t>::max());
}

void Correlation::onOverflowBegin(const Tag&) {
  pairUpTo(std::numeric_limits<timestamp_t>::max());  // with the partners seen before the gap
  forgetEvents();
}

void Correlation::onOverflowEnd(const Tag&) {
  forgetEvents();
}

void Correlation::onError(const Tag&) {
  pairUpTo(std::numeric_limits<timestamp_t>::max());
  forgetEvents();
}

void Correlation::clearData() {
  std::fill(counts_.begin(), counts_.end(), 0);
  forgetEvents();
  events_1_ = events_2_ = 0;
  overflow_time_ = 0;
}

void Correlation::savePartialState(ResultSet& out) const {
  out.add("counts", "counts", {n_bins_}, counts_, "pairs per bin");
  out.add("sums", "", {3},
          std::vector<std::int64_t>{static_cast<std::int64_t>(events_1_),
                                    static_cast<std::int64_t>(events_2_), overflow_time_},
          "events on channel_1, channel_2; capture time inside overflows (ps)");
}

void Correlation::mergePartial(const ResultSet& later) {
  const auto& counts = later.values<std::int64_t>("counts", n_bins_);
  for (std::size_t i = 0; i < n_bins_; ++i) counts_[i] += counts[i];
  const auto& sums = later.values<std::int64_t>("sums", 3);
  events_1_ += static_cast<std::uint64_t>(sums[0]);
  events_2_ += static_cast<std::uint64_t>(sums[1]);
  overflow_time_ += sums[2];
}

std::vector<std::int64_t> Correlation::getData() const {
  auto lock = lockData();
  return counts_;
}

std::vector<std::int64_t> Correlation::getIndex() const {
  std::vector<std::int64_t> index(n_bins_);
  for (std::size_t i = 0; i < n_bins_; ++i) {
    index[i] = lowest_ + static_cast<timestamp_t>(i) * binwidth_ + binwidth_ / 2;
  }
  return index;
}

std::vector<double> Correlation::normalizedLocked() const {
  const double valid_time = static_cast<double>(captureDurationLocked() - overflow_time_);
  const double scale =
      valid_time / (static_cast<double>(binwidth_) * static_cast<double>(events_1_) *
                    static_cast<double>(events_2_));
  std::vector<double> g2(n_bins_, std::numeric_limits<double>::quiet_NaN());
  if (events_1_ > 0 && events_2_ > 0 && valid_time > 0) {
    for (std::size_t i = 0; i < n_bins_; ++i) g2[i] = scale * static_cast<double>(counts_[i]);
  }
  return g2;
}

std::vector<double> Correlation::getDataNormalized() const {
  auto lock = lockData();
  return normalizedLocked();
}

std::pair<std::uint64_t, std::uint64_t> Correlation::getEventCounts() const {
  auto lock = lockData();
  return {events_1_, events_2_};
}

void Correlation::collectResults(ResultSet& out) const {
  out.add("data", "counts", {n_bins_}, counts_,
          "pairs per bin of tau = t(channel_1) - t(channel_2)");
  out.add("index", "ps", {n_bins_}, getIndex(), "bin centre (rounded down to whole ps)");
  out.add("data_normalized", "1", {n_bins_}, normalizedLocked(),
          "g2 = T / (binwidth * N1 * N2) * counts, T = capture time outside overflows; NaN "
          "without events");
  out.facts.set("events_1", static_cast<std::int64_t>(events_1_));
  out.facts.set("events_2", static_cast<std::int64_t>(events_2_));
  out.facts.set("valid_duration_ps", captureDurationLocked() - overflow_time_);
}

}  // namespace tagflow
