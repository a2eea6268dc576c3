#include "tagflow/measurements/histogram_log_bins.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr timestamp_t kNever = std::numeric_limits<timestamp_t>::max();
constexpr std::int64_t kMaxBins = 1'000'000;

Parameters logBinParameters(channel_t click, channel_t start, double exp_start, double exp_stop,
                            std::int64_t n_bins, const std::optional<ChannelGate>& click_gate,
                            const std::optional<ChannelGate>& start_gate) {
  Parameters p{{"click_channel", std::int64_t{click}},
               {"start_channel", std::int64_t{start}},
               {"exp_start", exp_start},
               {"exp_stop", exp_stop},
               {"n_bins", n_bins}};
  const auto gate = [&](const std::string& key, const std::optional<ChannelGate>& g) {
    if (g) {
      p.set(key, std::vector<std::int64_t>{g->open_channel, g->close_channel,
                                           g->initially_open ? 1 : 0});
    }
  };
  gate("click_gate", click_gate);
  gate("start_gate", start_gate);
  return p;
}

void checkGate(const std::string& who, const std::string& key,
               const std::optional<ChannelGate>& gate) {
  if (!gate) return;
  if (gate->open_channel == CHANNEL_UNUSED || gate->close_channel == CHANNEL_UNUSED) {
    throw InvalidArgument(who + ": " + key + " channels " + std::to_string(gate->open_channel) +
                          ", " + std::to_string(gate->close_channel) +
                          " include CHANNEL_UNUSED; it needs an open and a close channel");
  }
  if (gate->open_channel == gate->close_channel) {
    throw InvalidArgument(who + ": " + key + " opens and closes on the same channel " +
                          std::to_string(gate->open_channel) + " (valid: two different channels)");
  }
}

ParameterSpec gateKey(std::string name) {
  return ParameterSpec::integers(std::move(name))
      .optional()
      .sizeBetween(2, 3)
      .atLeast(std::numeric_limits<channel_t>::min())
      .atMost(std::numeric_limits<channel_t>::max())
      .help("[open_channel, close_channel] or [open_channel, close_channel, initially_open (0/1)]");
}

}  // namespace

const ParameterSchema& HistogramLogBins::schema() {
  static const ParameterSchema schema(
      "HistogramLogBins",
      "start-click time differences in logarithmic bins from 10^exp_start to 10^exp_stop s",
      {ParameterSpec::channel("click_channel").help("channel of the clicks"),
       ParameterSpec::channel("start_channel").help("channel of the starts"),
       ParameterSpec::real("exp_start")
           .atLeast(-12)
           .atMost(6)
           .help("lowest edge, exponent of seconds (-12: 1 ps)"),
       ParameterSpec::real("exp_stop")
           .atMost(6)
           .help("highest edge, exponent of seconds (> exp_start)"),
       ParameterSpec::integer("n_bins")
           .atLeast(1)
           .atMost(static_cast<double>(kMaxBins))
           .help("number of bins"),
       gateKey("click_gate"), gateKey("start_gate")});
  return schema;
}

HistogramLogBins::HistogramLogBins(std::string name, channel_t click_channel,
                                   channel_t start_channel, double exp_start, double exp_stop,
                                   std::int64_t n_bins, std::optional<ChannelGate> click_gate,
                                   std::optional<ChannelGate> start_gate)
    : Measurement(schema(), std::move(name),
                  logBinParameters(click_channel, start_channel, exp_start, exp_stop, n_bins,
                                   click_gate, start_gate)),
      click_channel_(click_channel),
      start_channel_(start_channel) {
  const std::string who = "HistogramLogBins '" + this->name() + "'";
  if (click_channel == CHANNEL_UNUSED || start_channel == CHANNEL_UNUSED) {
    throw InvalidArgument(who + ": click_channel and start_channel must be channels");
  }
  if (!(exp_stop > exp_start)) {
    throw InvalidArgument(who + ": exp_stop " + std::to_string(exp_stop) +
                          " is invalid (valid: > exp_start = " + std::to_string(exp_start) +
                          " and <= 6)");
  }
  checkGate(who, "click_gate", click_gate);
  checkGate(who, "start_gate", start_gate);
  click_gate_.gate = click_gate;
  start_gate_.gate = start_gate;

  const double step = (exp_stop - exp_start) / static_cast<double>(n_bins);
  for (std::int64_t i = 0; i <= n_bins; ++i) {
    const double exponent = i == n_bins ? exp_stop : exp_start + step * static_cast<double>(i);
    edges_.push_back(std::llround(std::pow(10.0, exponent + 12)));
  }
  edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
  if (edges_.size() < 2) {
    throw InvalidArgument(fmt::format(
        "{}: every edge of [1e{:.15g}, 1e{:.15g}) s rounds to the same picosecond (valid: "
        "exp_stop far enough above exp_start for edges 1 ps apart)",
        who, exp_start, exp_stop));
  }
  span_ = edges_.back();
  lookup_ = LogBinLookup(edges_);
  counts_.assign(edges_.size() - 1, 0);
  twin_counts_ = TwinCounts<std::uint64_t>(counts_.size());
  click_gate_.reset();
  start_gate_.reset();
  assumed_ = gateStates();
}

std::optional<std::vector<channel_t>> HistogramLogBins::inputChannels() const {
  std::vector<channel_t> channels{click_channel_, start_channel_};
  for (const GateState* state : {&click_gate_, &start_gate_}) {
    if (state->gate) {
      channels.push_back(state->gate->open_channel);
      channels.push_back(state->gate->close_channel);
    }
  }
  return channels;
}

std::vector<channel_t> HistogramLogBins::gatheredChannels() const {
  // Gated, the tags are taken one by one.
  if (click_gate_.gate || start_gate_.gate) return {};
  if (click_channel_ == start_channel_) return {start_channel_};
  return {start_channel_, click_channel_};
}

void HistogramLogBins::restartExposure(timestamp_t from) {
  starts_.clear();
  click_gate_.reset();
  start_gate_.reset();
  accumulate_from_ = from + span_;
}

void HistogramLogBins::accrue(timestamp_t time) {
  const timestamp_t from = std::max(last_time_, accumulate_from_);
  if (time > from) {
    if (click_gate_.open) accumulation_click_ += time - from;
    if (start_gate_.open) accumulation_start_ += time - from;
  }
  last_time_ = std::max(last_time_, time);
}

void HistogramLogBins::handleClick(timestamp_t time) {
  if (!click_gate_.open || time < accumulate_from_) return;
  ++n_click_;
  pairClicks(std::span<const timestamp_t>(&time, 1));
  starts_.dropBefore(time - span_ + 1);
}

void HistogramLogBins::pairClicks(std::span<const timestamp_t> clicks) {
  starts_.seal();
  // A pair's word is its tau as the look-up reads it.
  pairWindows(
      clicks, starts_.times(), 1 - span_, -edges_.front(), words_,
      [this](timestamp_t click, const timestamp_t* starts, std::size_t count, timestamp_t* out) {
        lookup_.writeWords(click, starts, count, out);
      },
      [this](std::span<const timestamp_t> words) {
        lookup_.countWords(words, counts_.data(), twin_counts_);
      });
}

void HistogramLogBins::processTimeTags(std::span<const Tag> tags) {
  if (click_gate_.gate || start_gate_.gate) {
    processGated(tags);
    forEachCopy([&](HistogramLogBins& copy) { copy.processGated(tags); });
    foldAgreeingAlternatives();
    return;
  }
  // No gates: the order between starts and clicks is fixed by their times alone, so split the
  // block into the two channels first and pair afterwards.
  const std::size_t first_new_start = starts_.size();
  clicks_.clear();
  const auto shared_starts = sharedTimes(tags, start_channel_);
  const auto shared_clicks = sharedTimes(tags, click_channel_);
  if (shared_starts && shared_clicks) {
    appendTimes(*shared_starts, starts_);
    appendTimes(*shared_clicks, clicks_);
  } else if (click_channel_ == start_channel_) {
    splitChannels(tags, start_channel_, starts_, start_channel_, nullptr);
    for (std::size_t i = first_new_start; i < starts_.size(); ++i) clicks_.push(starts_[i]);
  } else {
    splitChannels(tags, start_channel_, starts_, click_channel_, &clicks_);
  }
  const auto new_starts = starts_.times().subspan(first_new_start);
  n_start_ += static_cast<std::size_t>(
      new_starts.end() - std::lower_bound(new_starts.begin(), new_starts.end(), accumulate_from_));
  auto clicks = clicks_.times();
  clicks = clicks.subspan(static_cast<std::size_t>(
      std::lower_bound(clicks.begin(), clicks.end(), accumulate_from_) - clicks.begin()));
  n_click_ += clicks.size();
  pairClicks(clicks);
  dropUnreachableStarts(tags);
}

// Later clicks come no earlier than the last tag: starts a span before it pair with none of
// them. Dropped after every run of tags, so that starts without clicks do not pile up.
void HistogramLogBins::dropUnreachableStarts(std::span<const Tag> tags) {
  if (!tags.empty()) starts_.dropBefore(tags.back().time - span_ + 1);
}

void HistogramLogBins::processGated(std::span<const Tag> tags) {
  for (const Tag& tag : tags) {
    prefetchAhead(&tag);
    takeGateSnapshot(tag.time);
    const channel_t channel = tag.channel;
    if (channel == click_channel_) handleClick(tag.time);
    if (channel == start_channel_ && start_gate_.open) {
      starts_.push(tag.time);
      if (tag.time >= accumulate_from_) ++n_start_;
    }
    accrue(tag.time);
    click_gate_.update(channel);
    start_gate_.update(channel);
  }
  dropUnreachableStarts(tags);
}

std::optional<SplitSupport> HistogramLogBins::splitSupport() const {
  // Gated: which combination of a later range counts is known only from the range before it.
  const bool gated = click_gate_.gate || start_gate_.gate;
  return SplitSupport{.before = span_, .after = 0, .any_order = !gated};
}

std::array<std::int64_t, 4> HistogramLogBins::sums() const {
  return {accumulation_start_, accumulation_click_, static_cast<std::int64_t>(n_start_),
          static_cast<std::int64_t>(n_click_)};
}

void HistogramLogBins::followAlternatives() {
  assumed_ = gateStates();
  const auto states = [](const GateState& gate) {
    return gate.gate ? std::vector<bool>{gate.open, !gate.open} : std::vector<bool>{true};
  };
  for (const bool click_open : states(click_gate_)) {
    for (const bool start_open : states(start_gate_)) {
      if (GateStates{click_open, start_open} == assumed_) continue;
      Alternative alternative{{click_open, start_open}, nullptr, {}, sums(), std::nullopt};
      alternative.copy = std::make_unique<HistogramLogBins>(
          name(), click_channel_, start_channel_, parameters().getDouble("exp_start"),
          parameters().getDouble("exp_stop"), parameters().getInt("n_bins"), click_gate_.gate,
          start_gate_.gate);
      HistogramLogBins& copy = *alternative.copy;
      copy.last_time_ = last_time_;
      copy.accumulate_from_ = accumulate_from_;
      copy.click_gate_.open = click_open;
      copy.start_gate_.open = start_open;
      copy.snapshot_at_ = snapshot_at_;
      alternative.count_offsets.assign(counts_.begin(), counts_.end());
      alternatives_.push_back(std::move(alternative));
    }
  }
}

// A copy whose gates and starts equal this histogram's goes on exactly as this one does: only
// the difference of their sums is kept.
void HistogramLogBins::foldAgreeingAlternatives() {
  for (Alternative& alternative : alternatives_) {
    const HistogramLogBins* copy = alternative.copy.get();
    if (copy == nullptr || copy->click_gate_.open != click_gate_.open ||
        copy->start_gate_.open != start_gate_.open ||
        !std::ranges::equal(copy->starts_.times(), starts_.times())) {
      continue;
    }
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      alternative.count_offsets[i] +=
          static_cast<std::int64_t>(copy->counts_[i]) - static_cast<std::int64_t>(counts_[i]);
    }
    const std::array<std::int64_t, 4> own = sums(), other = copy->sums();
    for (std::size_t i = 0; i < own.size(); ++i) alternative.sum_offsets[i] += other[i] - own[i];
    alternative.snapshot = copy->gates_at_snapshot_;
    alternative.copy.reset();
  }
}

// The capture of a shard starts one span before its range, so the exposure (clicks count from
// capture start + span) begins exactly at the range: lead-in clicks and starts are not
// counted, only kept as partners, as in one pass.
void HistogramLogBins::processLeadIn(std::span<const Tag> tags) {
  processTimeTags(tags);
}

void HistogramLogBins::advanceTime(timestamp_t time) {
  accrue(time);
  takeGateSnapshot(time);
  forEachCopy([&](HistogramLogBins& copy) { copy.advanceTime(time); });
}

void HistogramLogBins::onCaptureStart(timestamp_t time, bool fresh) {
  last_time_ = time;
  restartExposure(time);
  // A capture start resets the gates, in one pass as here: the copies agree from now on.
  forEachCopy([&](HistogramLogBins& copy) {
    copy.last_time_ = time;
    copy.restartExposure(time);
  });
  // Started inside an overflow interval: nothing accumulates until it ends.
  if (inOverflow()) onOverflowBegin(Tag{TagType::OverflowBegin, 0, 0, 0, time});
  foldAgreeingAlternatives();
  // The range's first capture start (a later one, after stop() or clear(), finds the copies).
  if (!fresh || !alternatives_.empty() || !(click_gate_.gate || start_gate_.gate)) return;
  // Where the next range's capture starts, one span before this one's end.
  snapshot_at_ = std::max(countedEnd() - span_, time);
  gates_at_snapshot_.reset();
  // One pass would have read the stream before here: the gates' states are not known.
  if (startsMidStream()) followAlternatives();
}

void HistogramLogBins::onOverflowBegin(const Tag& tag) {
  starts_.clear();
  accumulate_from_ = kNever;
  forEachCopy([&](HistogramLogBins& copy) { copy.onOverflowBegin(tag); });
}

void HistogramLogBins::onOverflowEnd(const Tag& tag) {
  restartExposure(tag.time);
  forEachCopy([&](HistogramLogBins& copy) { copy.onOverflowEnd(tag); });
  foldAgreeingAlternatives();
}

void HistogramLogBins::onError(const Tag& tag) {
  restartExposure(tag.time);
  forEachCopy([&](HistogramLogBins& copy) { copy.onError(tag); });
  foldAgreeingAlternatives();
}

void HistogramLogBins::clearData() {
  std::fill(counts_.begin(), counts_.end(), 0);
  starts_.clear();
  accumulation_start_ = accumulation_click_ = 0;
  n_start_ = n_click_ = 0;
  for (Alternative& alternative : alternatives_) {
    if (alternative.copy) alternative.copy->clearData();
    std::fill(alternative.count_offsets.begin(), alternative.count_offsets.end(), 0);
    alternative.sum_offsets = {};
  }
}

std::vector<std::uint64_t> HistogramLogBins::getData() const {
  auto lock = lockData();
  return counts_;
}

std::vector<double> HistogramLogBins::densityLocked() const {
  std::vector<double> density(counts_.size());
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    density[i] = static_cast<double>(counts_[i]) / static_cast<double>(edges_[i + 1] - edges_[i]);
  }
  return density;
}

std::vector<double> HistogramLogBins::getDataNormalizedCountsPerPs() const {
  auto lock = lockData();
  return densityLocked();
}

double HistogramLogBins::g2ScaleLocked() const {
  if (n_start_ == 0 || n_click_ == 0 || accumulation_start_ == 0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return static_cast<double>(accumulation_start_) /
         (static_cast<double>(n_start_) * static_cast<double>(n_click_));
}

std::vector<double> HistogramLogBins::g2Locked() const {
  const double scale = g2ScaleLocked();
  std::vector<double> g2 = densityLocked();
  for (double& value : g2) value = scale * value;
  return g2;
}

std::vector<double> HistogramLogBins::g2NormalizationLocked() const {
  const double scale = g2ScaleLocked();
  std::vector<double> factor(counts_.size());
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    factor[i] = scale / static_cast<double>(edges_[i + 1] - edges_[i]);
  }
  return factor;
}

HistogramLogBinsData HistogramLogBins::getDataObject() const {
  auto lock = lockData();
  return HistogramLogBinsData{edges_,
                              counts_,
                              g2Locked(),
                              g2NormalizationLocked(),
                              accumulation_start_,
                              accumulation_click_,
                              n_start_,
                              n_click_};
}

std::vector<double> HistogramLogBins::getDataNormalizedG2() const {
  auto lock = lockData();
  return g2Locked();
}

timestamp_t HistogramLogBins::getAccumulationTimeStart() const {
  auto lock = lockData();
  return accumulation_start_;
}

timestamp_t HistogramLogBins::getAccumulationTimeClick() const {
  auto lock = lockData();
  return accumulation_click_;
}

// One row per combination of the gates' states at the range's start (one row without gates,
// or in a range whose start is known): the states assumed, the states at the range's end, and
// what the range counted under them.
void HistogramLogBins::savePartialState(ResultSet& out) const {
  const std::size_t bins = counts_.size();
  const GateStates next = gatesForNextRange();
  std::vector<std::int64_t> gates{assumed_[0], assumed_[1], next[0], next[1]};
  std::vector<std::uint64_t> counts(counts_);
  const std::array<std::int64_t, 4> own_sums = sums();
  std::vector<std::int64_t> sums_out(own_sums.begin(), own_sums.end());
  for (const Alternative& alternative : alternatives_) {
    const HistogramLogBins& state = alternative.copy ? *alternative.copy : *this;
    const GateStates alternative_next =
        alternative.copy ? state.gatesForNextRange() : alternative.snapshot.value_or(next);
    gates.insert(gates.end(), {alternative.assumed[0], alternative.assumed[1], alternative_next[0],
                               alternative_next[1]});
    for (std::size_t i = 0; i < bins; ++i) {
      counts.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(state.counts_[i]) +
                                                  alternative.count_offsets[i]));
    }
    const std::array<std::int64_t, 4> state_sums = state.sums();
    for (std::size_t i = 0; i < 4; ++i)
      sums_out.push_back(state_sums[i] + alternative.sum_offsets[i]);
  }
  const std::size_t rows = 1 + alternatives_.size();
  out.add("gates", "1", {rows, 4}, std::move(gates),
          "per combination: click and start gate open at the capture start (assumed), and one "
          "span before the range's end");
  out.add("counts", "counts", {rows, bins}, std::move(counts), "start-click pairs per bin");
  out.add("sums", "", {rows, 4}, std::move(sums_out),
          "accumulation time start, click (ps); starts, clicks counted");
}

void HistogramLogBins::mergePartial(const ResultSet& later) {
  const std::string who = "HistogramLogBins '" + name() + "'";
  if (!alternatives_.empty()) {
    throw InvalidArgument(who +
                          ": its range does not know its gates' states at its start, so "
                          "it cannot take the next range (merge in time order into the "
                          "first range's histogram)");
  }
  const std::size_t bins = counts_.size();
  const std::size_t rows = later.array("gates").shape.at(0);
  const auto& gates = later.values<std::int64_t>("gates", rows * 4);
  const auto& counts = later.values<std::uint64_t>("counts", rows * bins);
  const auto& sums = later.values<std::int64_t>("sums", rows * 4);
  // The combination the later range assumed where this one leaves the gates for it.
  const GateStates key = gatesForNextRange();
  std::size_t row = 0;
  while (row < rows && (gates[4 * row] != key[0] || gates[4 * row + 1] != key[1])) ++row;
  if (row == rows) {
    throw InvalidArgument(who + ": the later range has no counts for gates " +
                          (key[0] ? "open" : "closed") + "/" + (key[1] ? "open" : "closed") +
                          " at its start");
  }
  for (std::size_t i = 0; i < bins; ++i) counts_[i] += counts[row * bins + i];
  accumulation_start_ += sums[4 * row];
  accumulation_click_ += sums[4 * row + 1];
  n_start_ += static_cast<std::uint64_t>(sums[4 * row + 2]);
  n_click_ += static_cast<std::uint64_t>(sums[4 * row + 3]);
  gates_at_snapshot_ = GateStates{gates[4 * row + 2] != 0, gates[4 * row + 3] != 0};
}

void HistogramLogBins::collectResults(ResultSet& out) const {
  const std::size_t bins = counts_.size();
  out.add("bin_edges", "ps", {bins + 1}, edges_, "bin i holds tau in [edge i, edge i+1)");
  out.add("data", "counts", {bins}, counts_, "start-click pairs per bin");
  out.add("data_normalized_counts_per_ps", "1/ps", {bins}, densityLocked(), "counts / bin width");
  out.add("g2", "1", {bins}, g2Locked(),
          "T_start / (bin width * N_start * N_click) * counts; NaN before any accumulation");
  out.facts.set("accumulation_time_start", accumulation_start_);
  out.facts.set("accumulation_time_click", accumulation_click_);
  out.facts.set("n_start", static_cast<std::int64_t>(n_start_));
  out.facts.set("n_click", static_cast<std::int64_t>(n_click_));
}

}  // namespace tagflow
