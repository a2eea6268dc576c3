#include "tagflow/measurements/counter.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

Parameters counterParameters(const std::vector<channel_t>& channels, timestamp_t binwidth,
                             std::int64_t n_values) {
  return Parameters{{"channels", std::vector<std::int64_t>(channels.begin(), channels.end())},
                    {"binwidth", binwidth},
                    {"n_values", n_values}};
}

// Largest ring we accept: 2^28 values over all channels (2 GiB of int64).
constexpr std::int64_t kMaxValues = std::int64_t{1} << 28;
// Longest span of the kept bins, binwidth * n_values: 2^62 ps (about 53 days), so that a bin's
// end (a stream time, within 2^62 ps, plus a bin) and the results' index fit in timestamp_t.
constexpr timestamp_t kMaxSpan = timestamp_t{1} << 62;
// Gaps below this are divided by the multiply-high divider, longer ones by a division.
constexpr timestamp_t kDividerLimit = timestamp_t{1} << ExactDivider::kInputBits;
// Below this many tags a bin on average, a block is counted tag by tag (countTagByTag). On the
// demo stream that loop ran at about 1 GTags/s whatever the bins; the bulk count overtook it
// between 700 tags a bin (10 us: 850 against 1040 MTags/s) and 7000 (100 us: 1200 against
// 1060).
constexpr double kTagByTagBelow = 2048;

}  // namespace

const ParameterSchema& Counter::schema() {
  static const ParameterSchema schema(
      "Counter", "counts per channel in consecutive bins, the last n_values bins kept",
      {ParameterSpec::channels("channels").help("channels to count"),
       ParameterSpec::integer("binwidth")
           .unit("ps")
           .atLeast(1)
           .byDefault(std::int64_t{1'000'000'000})
           .help("bin width"),
       ParameterSpec::integer("n_values")
           .atLeast(1)
           .atMost(kMaxValues)
           .byDefault(std::int64_t{1})
           .help("number of bins kept per channel (channels * n_values <= 268435456)")});
  return schema;
}

Counter::Counter(std::string name, std::vector<channel_t> channels, timestamp_t binwidth,
                 std::int64_t n_values)
    : Measurement(schema(), std::move(name), counterParameters(channels, binwidth, n_values)),
      index_(channels, "Counter '" + this->name() + "'"),
      binwidth_(binwidth),
      bins_in_(static_cast<std::uint64_t>(std::max<timestamp_t>(binwidth, 1))),
      n_values_(static_cast<std::size_t>(n_values)) {
  const std::string label = "Counter '" + this->name() + "'";
  if (binwidth > kMaxSpan / n_values) {
    throw InvalidArgument(label + ": binwidth * n_values = " + std::to_string(binwidth) + " * " +
                          std::to_string(n_values) + " ps is too long (valid: <= " +
                          std::to_string(kMaxSpan) + " ps, about 53 days)");
  }
  if (index_.size() > static_cast<std::size_t>(kMaxValues / n_values)) {
    throw InvalidArgument(label + ": channels * n_values = " + std::to_string(index_.size()) +
                          " * " + std::to_string(n_values) + " values is too many (valid: <= " +
                          std::to_string(kMaxValues) + " in all)");
  }
  current_.assign(index_.size() + 1, 0);
  buffer_.assign(index_.size() * n_values_, 0);
  overflow_.assign(n_values_, 0);
  bin_of_slot_.assign(n_values_, kNoBin);
  totals_.assign(index_.size(), 0);
}

void Counter::processTimeTags(std::span<const Tag> tags) {
  if (tags.empty()) return;
  const auto span = static_cast<double>(tags.back().time - tags.front().time) + 1;
  if (static_cast<double>(tags.size()) * static_cast<double>(binwidth_) < kTagByTagBelow * span) {
    return countTagByTag(tags);
  }
  while (!tags.empty()) {
    if (tags.front().time >= bin_end_) completeBinsBefore(tags.front().time);
    // Tags that all lie before the bin's end are counted without a time test each.
    if (tags.back().time < bin_end_) return index_.countTags(tags, current_.data());
    // A bin ends among them. A long stretch before its end is found by a search and counted
    // in bulk; a short one tag by tag up to the end (which a later tag is known to stop),
    // cheaper than a search.
    constexpr std::size_t kLong = 64;
    std::size_t stretch = 0;
    if (tags.size() > kLong && tags[kLong].time < bin_end_) {
      stretch = firstAtOrAfter(tags, bin_end_);
      index_.countTags(tags.first(stretch), current_.data());
    } else {
      const ChannelIndex::Lookup lookup = index_.lookup();
      for (; tags[stretch].time < bin_end_; ++stretch) ++current_[lookup(tags[stretch].channel)];
    }
    tags = tags.subspan(stretch);
  }
}

void Counter::countTagByTag(std::span<const Tag> tags) {
  // One branch a tag that the stream decides (does it begin a bin?); the work of a new bin is
  // straight code: writing the finished bin's row and moving past the empty bins after it.
  // That is completeCurrentBin() and completeBinsBefore() without the tests they need outside
  // this loop (is anything counted, is the bin flagged, how far is the gap): written out here
  // because as calls, with those tests, they cost this loop half its speed.
  const ChannelIndex::Lookup lookup = index_.lookup();
  const std::size_t channels = index_.size();
  std::uint64_t* const current = current_.data();
  std::uint64_t* const totals = totals_.data();
  timestamp_t bin_end = bin_end_;
  for (const Tag& tag : tags) {
    if (tag.time >= bin_end) {
      const timestamp_t past_end = tag.time - bin_end;
      if (inOverflow() || current_overflow_ || past_end >= kDividerLimit) {
        bin_end_ = bin_end;
        completeBinsBefore(tag.time);
        bin_end = bin_end_;
      } else {
        std::int64_t* const row = buffer_.data() + write_position_ * channels;
        for (std::size_t c = 0; c < channels; ++c) {
          row[c] = static_cast<std::int64_t>(current[c]);
          totals[c] += current[c];
          current[c] = 0;
        }
        current[channels] = 0;  // the discard slot
        overflow_[write_position_] = 0;
        bin_of_slot_[write_position_] = bins_completed_;
        // The finished bin and the empty ones after it (not written: their slots' bin numbers
        // say they hold older bins, which read as zero).
        const std::uint64_t advance = 1 + bins_in_(static_cast<std::uint64_t>(past_end));
        bins_completed_ += advance;
        write_position_ = advance < n_values_ - write_position_
                              ? write_position_ + static_cast<std::size_t>(advance)
                              : static_cast<std::size_t>(bins_completed_ % n_values_);
        bin_end += static_cast<timestamp_t>(advance) * binwidth_;
      }
    }
    ++current[lookup(tag.channel)];
  }
  bin_end_ = bin_end;
}

void Counter::advanceTime(timestamp_t time) {
  completeBinsBefore(time);
  last_time_ = time;
}

void Counter::completeBinsBefore(timestamp_t time) {
  if (bin_end_ > time) return;
  completeCurrentBin();
  if (bin_end_ > time) return;
  // Bins that were entirely empty: zero counts, flagged if the stream is in overflow. An
  // unflagged one is not written at all (its slot's bin number says it holds an older bin,
  // which reads as zero), so that a stream of sparse tags in fine bins costs per tag, not per
  // bin; flagged ones are written, at most n_values of them.
  const timestamp_t past_end = time - bin_end_;
  const std::uint64_t empty_bins =
      1 + (past_end < binwidth_       ? 0
           : past_end < kDividerLimit ? bins_in_(static_cast<std::uint64_t>(past_end))
                                      : static_cast<std::uint64_t>(past_end / binwidth_));
  const bool flag = inOverflow();
  if (flag) {
    const std::uint64_t to_write = std::min<std::uint64_t>(empty_bins, n_values_);
    for (std::uint64_t bin = bins_completed_ + empty_bins - to_write;
         bin < bins_completed_ + empty_bins; ++bin) {
      const std::size_t position = bin % n_values_;
      std::fill_n(buffer_.begin() + static_cast<std::ptrdiff_t>(position * index_.size()),
                  index_.size(), 0);
      overflow_[position] = 1;
      bin_of_slot_[position] = bin;
    }
  }
  bins_completed_ += empty_bins;
  write_position_ = empty_bins < n_values_ - write_position_
                        ? write_position_ + static_cast<std::size_t>(empty_bins)
                        : static_cast<std::size_t>(bins_completed_ % n_values_);
  bin_end_ += static_cast<timestamp_t>(empty_bins) * binwidth_;
  current_overflow_ = flag;
}

void Counter::completeCurrentBin() {
  // One pass over the row, fused: at fine bins a bin completes for nearly every tag.
  const std::size_t channels = index_.size();
  std::uint64_t* const current = current_.data();
  std::uint64_t counted = 0;
  for (std::size_t c = 0; c < channels; ++c) counted |= current[c];
  if (counted != 0 || current_overflow_) {
    const std::size_t position = write_position_;
    std::int64_t* const row = buffer_.data() + position * channels;
    std::uint64_t* const totals = totals_.data();
    for (std::size_t c = 0; c < channels; ++c) {
      row[c] = static_cast<std::int64_t>(current[c]);
      totals[c] += current[c];
      current[c] = 0;
    }
    overflow_[position] = current_overflow_;
    bin_of_slot_[position] = bins_completed_;
  }
  current[channels] = 0;  // the discard slot
  write_position_ = write_position_ + 1 == n_values_ ? 0 : write_position_ + 1;
  current_overflow_ = inOverflow();
  ++bins_completed_;
  bin_end_ += binwidth_;
}

void Counter::onCaptureStart(timestamp_t time, bool fresh) {
  if (fresh) {
    // A shard of a later range starts in the one-pass bin that holds `time`.
    const std::optional<timestamp_t> origin = planOrigin();
    capture_start_ = time;
    first_bin_start_ = time;
    if (origin) {
      const timestamp_t offset = time - *origin;
      const timestamp_t whole = offset / binwidth_ - (offset % binwidth_ < 0 ? 1 : 0);
      first_bin_start_ = *origin + whole * binwidth_;
    }
    bin_end_ = first_bin_start_ + binwidth_;
    started_ = true;
    current_overflow_ = inOverflow();
    pause_shifts_.clear();
    removed_until_ = 0;
  } else {
    notePause(time - last_time_);
    bin_end_ += time - last_time_;
    current_overflow_ = current_overflow_ || inOverflow();
  }
  last_time_ = time;
}

void Counter::notePause(timestamp_t pause) {
  if (pause <= 0) return;
  // The integrating bin began before the pause, unless the pause began at its start.
  const bool began_at_pause = bin_end_ - binwidth_ == last_time_;
  const timestamp_t paused = (pause_shifts_.empty() ? 0 : pause_shifts_.back().paused) + pause;
  pause_shifts_.push_back({bins_completed_ + (began_at_pause ? 0 : 1), paused});
  // An entry whose successor applies from the oldest kept bin on is never read again.
  const std::uint64_t oldest_kept =
      bins_completed_ - std::min<std::uint64_t>(bins_completed_, n_values_);
  std::size_t unread = 0;
  while (unread + 1 < pause_shifts_.size() && pause_shifts_[unread + 1].first_bin <= oldest_kept) {
    ++unread;
  }
  pause_shifts_.erase(pause_shifts_.begin(),
                      pause_shifts_.begin() + static_cast<std::ptrdiff_t>(unread));
}

void Counter::onOverflowBegin(const Tag&) {
  current_overflow_ = true;
}

void Counter::onOverflowEnd(const Tag& tag) {
  // The interval [begin, end) touches the current bin unless it ended exactly at its start
  // (the bin was then flagged at birth only because the interval was still open).
  current_overflow_ = tag.time > bin_end_ - binwidth_;
}

void Counter::onMissedEvents(const Tag& tag) {
  const std::uint32_t slot = index_.slot(tag.channel);
  if (slot != index_.discardSlot()) totals_[slot] += tag.missed_events;
}

void Counter::clearData() {
  std::fill(current_.begin(), current_.end(), 0);
  std::fill(buffer_.begin(), buffer_.end(), 0);
  std::fill(overflow_.begin(), overflow_.end(), 0);
  std::fill(bin_of_slot_.begin(), bin_of_slot_.end(), kNoBin);
  std::fill(totals_.begin(), totals_.end(), 0);
  bins_completed_ = 0;
  write_position_ = 0;
  current_overflow_ = false;
  started_ = false;
  pause_shifts_.clear();
  removed_until_ = 0;
}

std::uint64_t Counter::binAt(std::size_t column, bool rolling) const {
  const std::uint64_t filled = std::min<std::uint64_t>(bins_completed_, n_values_);
  const std::uint64_t oldest = bins_completed_ - filled;
  if (rolling) {
    // Newest last: column n_values - filled shows the oldest kept bin.
    const std::size_t first_filled = n_values_ - filled;
    return column < first_filled ? kNoBin : oldest + (column - first_filled);
  }
  // Buffer order: the column is the bin's slot.
  const std::uint64_t bin = oldest + (column + n_values_ - oldest % n_values_) % n_values_;
  return bin < bins_completed_ ? bin : kNoBin;
}

std::int64_t Counter::bufferPosition(std::size_t column, bool rolling) const {
  const std::uint64_t bin = binAt(column, rolling);
  if (bin == kNoBin) return -1;
  const std::size_t position = bin % n_values_;
  return bin_of_slot_[position] == bin ? static_cast<std::int64_t>(position) : -1;
}

std::vector<std::int64_t> Counter::getData(bool rolling) const {
  auto lock = lockData();
  return dataLocked(rolling);
}

std::vector<double> Counter::getDataNormalized(bool rolling) const {
  auto lock = lockData();
  return normalizedLocked(rolling);
}

std::vector<std::int8_t> Counter::getOverflowMask(bool rolling) const {
  auto lock = lockData();
  return overflowMaskLocked(rolling);
}

std::vector<std::int64_t> Counter::dataLocked(bool rolling) const {
  std::vector<std::int64_t> data(index_.size() * n_values_, 0);
  for (std::size_t column = 0; column < n_values_; ++column) {
    const std::int64_t position = bufferPosition(column, rolling);
    if (position < 0) continue;
    for (std::size_t c = 0; c < index_.size(); ++c) {
      data[c * n_values_ + column] =
          buffer_[static_cast<std::size_t>(position) * index_.size() + c];
    }
  }
  return data;
}

std::vector<double> Counter::normalizedLocked(bool rolling) const {
  const double per_second = static_cast<double>(kPicosecondsPerSecond) / binwidth_;
  std::vector<double> data(index_.size() * n_values_, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t column = 0; column < n_values_; ++column) {
    if (binAt(column, rolling) == kNoBin) continue;  // not filled yet: NaN
    const std::int64_t position = bufferPosition(column, rolling);
    if (position >= 0 && overflow_[static_cast<std::size_t>(position)]) continue;
    for (std::size_t c = 0; c < index_.size(); ++c) {
      const std::int64_t count =
          position < 0 ? 0 : buffer_[static_cast<std::size_t>(position) * index_.size() + c];
      data[c * n_values_ + column] = static_cast<double>(count) * per_second;
    }
  }
  return data;
}

std::vector<std::int8_t> Counter::overflowMaskLocked(bool rolling) const {
  std::vector<std::int8_t> mask(n_values_, 0);
  for (std::size_t column = 0; column < n_values_; ++column) {
    const std::int64_t position = bufferPosition(column, rolling);
    if (position >= 0) mask[column] = overflow_[static_cast<std::size_t>(position)];
  }
  return mask;
}

std::vector<std::uint64_t> Counter::totalsLocked() const {
  std::vector<std::uint64_t> totals(totals_);
  for (std::size_t c = 0; c < index_.size(); ++c) totals[c] += current_[c];
  return totals;
}

std::vector<std::int64_t> Counter::getIndex() const {
  std::vector<std::int64_t> index(n_values_);
  for (std::size_t i = 0; i < n_values_; ++i) index[i] = static_cast<std::int64_t>(i) * binwidth_;
  return index;
}

std::vector<std::uint64_t> Counter::getDataTotalCounts() const {
  auto lock = lockData();
  return totalsLocked();
}

std::uint64_t Counter::getBinsCompleted() const {
  auto lock = lockData();
  return bins_completed_;
}

CounterData Counter::getDataObject(bool remove) {
  auto lock = lockData();
  const std::size_t n_channels = index_.size();
  const std::uint64_t oldest_kept =
      bins_completed_ - std::min<std::uint64_t>(bins_completed_, n_values_);
  CounterData out;
  out.channels = channels();
  out.binwidth = binwidth_;
  out.first_bin = std::max(oldest_kept, removed_until_);
  out.dropped_bins = oldest_kept > removed_until_ ? oldest_kept - removed_until_ : 0;
  out.size = static_cast<std::size_t>(bins_completed_ - out.first_bin);
  out.data.assign(n_channels * out.size, 0);
  out.overflow_mask.assign(out.size, 0);
  out.time.resize(out.size);
  out.total_counts = totals_;
  std::size_t shifts = 0;  // pause_shifts_ entries that apply to the bin
  for (std::size_t i = 0; i < out.size; ++i) {
    const std::uint64_t bin = out.first_bin + i;
    const std::size_t position = bin % n_values_;
    // A slot holding an older bin: this one was empty and never written.
    if (bin_of_slot_[position] == bin) {
      for (std::size_t c = 0; c < n_channels; ++c) {
        out.data[c * out.size + i] = buffer_[position * n_channels + c];
      }
      out.overflow_mask[i] = overflow_[position];
      out.overflow = out.overflow || overflow_[position] != 0;
    }
    while (shifts < pause_shifts_.size() && pause_shifts_[shifts].first_bin <= bin) ++shifts;
    const timestamp_t paused = shifts == 0 ? 0 : pause_shifts_[shifts - 1].paused;
    out.time[i] = first_bin_start_ + static_cast<timestamp_t>(bin) * binwidth_ + paused;
  }
  if (remove) removed_until_ = bins_completed_;
  return out;
}

std::vector<double> CounterData::dataNormalized() const {
  const double per_second = static_cast<double>(kPicosecondsPerSecond) / binwidth;
  std::vector<double> normalized(data.size());
  for (std::size_t k = 0; k < data.size(); ++k) {
    normalized[k] = overflow_mask[k % size] != 0 ? std::numeric_limits<double>::quiet_NaN()
                                                 : static_cast<double>(data[k]) * per_second;
  }
  return normalized;
}

std::vector<std::int64_t> CounterData::index() const {
  std::vector<std::int64_t> starts(size);
  for (std::size_t i = 0; i < size; ++i) {
    starts[i] = static_cast<std::int64_t>(first_bin + i) * binwidth;
  }
  return starts;
}

void Counter::collectResults(ResultSet& out) const {
  const std::size_t n_channels = index_.size();
  out.add("data", "counts", {n_channels, n_values_}, dataLocked(true),
          "counts per completed bin, [channel][bin], rolling order (newest last)");
  out.add("index", "ps", {n_values_}, getIndex(), "bin start relative to bin 0");
  out.add("data_normalized", "Hz", {n_channels, n_values_}, normalizedLocked(true),
          "counts / binwidth; NaN for unfilled bins and bins touched by an overflow");
  out.add("data_total_counts", "counts", {n_channels}, totalsLocked(),
          "since clear(), including the integrating bin and missed events");
  out.add("overflow_mask", "1", {n_values_}, overflowMaskLocked(true),
          "1 where the bin was touched by an overflow interval");
  out.facts.set("bins_completed", static_cast<std::int64_t>(bins_completed_));
}

void Counter::savePartialState(ResultSet& out) const {
  const std::size_t n_channels = index_.size();
  out.add("data", "counts", {n_channels, n_values_}, dataLocked(true),
          "completed bins, [channel][bin], rolling order");
  out.add("overflow_mask", "1", {n_values_}, overflowMaskLocked(true), "rolling order");
  out.add("current", "counts", {n_channels},
          std::vector<std::uint64_t>(current_.begin(), current_.end() - 1), "the integrating bin");
  out.add("totals", "counts", {n_channels}, totals_, "completed bins plus missed events");
  out.add("grid", "", {7},
          std::vector<std::int64_t>{started_, capture_start_, first_bin_start_,
                                    static_cast<std::int64_t>(bins_completed_), bin_end_,
                                    last_time_, current_overflow_},
          "started, capture start (ps), first bin's start (ps), bins completed, integrating "
          "bin's end (ps), time reached (ps), integrating bin flagged");
}

void Counter::mergePartial(const ResultSet& later) {
  const std::size_t n_channels = index_.size();
  const auto& grid = later.values<std::int64_t>("grid", 7);
  if (grid[0] == 0) return;  // the later range captured nothing
  const auto& data = later.values<std::int64_t>("data", n_channels * n_values_);
  const auto& mask = later.values<std::int8_t>("overflow_mask", n_values_);
  const auto& current = later.values<std::uint64_t>("current", n_channels);
  const auto& totals = later.values<std::uint64_t>("totals", n_channels);
  const timestamp_t later_start = grid[1];
  const timestamp_t later_first = grid[2];
  if (!started_) {
    // Nothing of our own: the later state's first bin is the one integrating here, empty.
    started_ = true;
    capture_start_ = later_start;
    first_bin_start_ = later_first;
    bin_end_ = later_first + binwidth_;
    last_time_ = later_start;
  }
  const std::string who = "Counter '" + name() + "': ";
  if (later_start != last_time_) {
    throw InvalidArgument(who + "the later range begins at " + std::to_string(later_start) +
                          " ps, this one ends at " + std::to_string(last_time_) +
                          " ps (merge consecutive ranges in time order)");
  }
  const timestamp_t seam_start = bin_end_ - binwidth_;
  if (later_first != seam_start) {
    throw InvalidArgument(who + "the later range's bins begin at " + std::to_string(later_first) +
                          " ps, this range's integrating bin at " + std::to_string(seam_start) +
                          " ps (plan each range with the stream's capture start as origin)");
  }
  // A range that ended on the seam bin's start holds nothing of it, also no overflow flag.
  const bool seam_flag = last_time_ > seam_start && current_overflow_;
  const auto later_completed = static_cast<std::uint64_t>(grid[3]);
  const bool later_flag = grid[6] != 0;
  last_time_ = grid[5];
  if (later_completed == 0) {
    // The later range ended inside the seam bin: it is still integrating.
    for (std::size_t c = 0; c < n_channels; ++c) {
      current_[c] += current[c];
      totals_[c] += totals[c];
    }
    current_overflow_ = seam_flag || later_flag;
    return;
  }

  // Rolling column k of the merged ring shows our column k + later_completed while that is
  // inside the ring, otherwise the later state's column k; the later state's bin 0 (its column
  // n_values - later_completed) is the seam bin.
  std::vector<std::int64_t> merged = dataLocked(true);
  std::vector<std::int8_t> merged_mask = overflowMaskLocked(true);
  const std::size_t n = n_values_;
  for (std::size_t k = 0; k < n; ++k) {
    const bool ours = later_completed < n - k;
    for (std::size_t c = 0; c < n_channels; ++c) {
      merged[c * n + k] = ours ? merged[c * n + k + later_completed] : data[c * n + k];
    }
    merged_mask[k] = ours ? merged_mask[k + later_completed] : mask[k];
  }
  if (later_completed <= n) {
    const std::size_t seam = n - later_completed;
    for (std::size_t c = 0; c < n_channels; ++c) {
      merged[c * n + seam] += static_cast<std::int64_t>(current_[c]);
    }
    merged_mask[seam] = static_cast<std::int8_t>(merged_mask[seam] || seam_flag);
  }
  for (std::size_t c = 0; c < n_channels; ++c) {
    totals_[c] += current_[c] + totals[c];
    current_[c] = current[c];
  }
  current_overflow_ = later_flag;
  bins_completed_ += later_completed;
  write_position_ = static_cast<std::size_t>(bins_completed_ % n);
  bin_end_ = grid[4];

  // Back into the slots, every kept bin written.
  std::fill(bin_of_slot_.begin(), bin_of_slot_.end(), kNoBin);
  const std::uint64_t kept = std::min<std::uint64_t>(bins_completed_, n);
  for (std::size_t k = n - kept; k < n; ++k) {
    const std::uint64_t bin = bins_completed_ - n + k;
    const std::size_t position = bin % n;
    for (std::size_t c = 0; c < n_channels; ++c) {
      buffer_[position * n_channels + c] = merged[c * n + k];
    }
    overflow_[position] = merged_mask[k];
    bin_of_slot_[position] = bin;
  }
}

}  // namespace tagflow
