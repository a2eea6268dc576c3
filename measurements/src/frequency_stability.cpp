#include "tagflow/measurements/frequency_stability.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kMaxStep = std::int64_t{1} << 24;
constexpr std::int64_t kMaxAverage = std::int64_t{1} << 32;
constexpr std::int64_t kMaxTraceLen = std::int64_t{1} << 24;
// Beyond this phase (ps) a double keeps only about 1e-6 ps: shift the series back towards 0.
constexpr double kReanchorPhasePs = 4294967296.0;
// Edges held back at the start of every series until the median of their intervals gives the
// missing-edge check its period: a few glitches or missing edges among them leave it as it is.
// A series that ends with fewer than kFewestProbeEdges has too few for a median: its edges go
// in unchecked.
constexpr std::size_t kProbeEdges = 16;
constexpr std::size_t kFewestProbeEdges = 5;

__extension__ using Wide = unsigned __int128;  // FrequencyStability::Accumulator

// The double nearest to `sum`, as static_cast gives it; sums below 2^64 (any group of short
// intervals) take the 64-bit conversion instead of the 128-bit one's library call.
double toDouble(Wide sum) {
  const auto low = static_cast<std::uint64_t>(sum);
  return sum == low ? static_cast<double>(low) : static_cast<double>(sum);
}

std::string owner(const std::string& name) {
  return "FrequencyStability '" + name + "'";
}

}  // namespace

const ParameterSchema& FrequencyStability::schema() {
  static const ParameterSchema schema(
      "FrequencyStability",
      "overlapping Allan, modified Allan and Hadamard deviations and traces of a clock",
      {ParameterSpec::channel("channel").help("channel of the clock"),
       ParameterSpec::integers("steps")
           .atLeast(1)
           .atMost(static_cast<double>(kMaxStep))
           .sizeBetween(1, SIZE_MAX)
           .help("steps n: tau = n * average * measured period"),
       ParameterSpec::integer("average")
           .atLeast(1)
           .atMost(static_cast<double>(kMaxAverage))
           .byDefault(std::int64_t{1000})
           .help("edges averaged into one phase sample"),
       ParameterSpec::integer("trace_len")
           .atLeast(0)
           .atMost(static_cast<double>(kMaxTraceLen))
           .byDefault(std::int64_t{1000})
           .help("samples kept for the traces")});
  return schema;
}

FrequencyStability::FrequencyStability(std::string name, channel_t channel,
                                       std::vector<std::int64_t> steps, std::int64_t average,
                                       std::int64_t trace_len)
    : Measurement(schema(), std::move(name),
                  Parameters{{"channel", std::int64_t{channel}},
                             {"steps", steps},
                             {"average", average},
                             {"trace_len", trace_len}}),
      channel_(channel),
      steps_(steps),
      average_(average),
      trace_len_(static_cast<std::size_t>(trace_len)),
      times_(std::span<const channel_t>(&channel_, 1), owner(this->name())),
      sums_(steps_) {
  if (trace_len_ > 0) trace_.resize(trace_len_ + 1);
}

void FrequencyStability::processTimeTags(std::span<const Tag> tags) {
  if (!active_ || inOverflow()) return;
  times_.gather(tags, [&](channel_t channel) { return sharedTimes(tags, channel); });
  const std::span<const timestamp_t> times = times_.times(0);
  // Room for a sample per group the block and the held-back edges can complete.
  const std::size_t most = (times.size() + kProbeEdges) / static_cast<std::size_t>(average_) + 1;
  if (pending_samples_.size() < pending_count_ + most) {
    pending_samples_.resize(pending_count_ + most);
  }
  for (std::size_t i = 0; i < times.size();) {
    i = has_edge_period_ ? addCheckedEdges(times, i) : addProbeEdge(times, i);
  }
  takePhases(true);
}

inline FrequencyStability::SampleTime FrequencyStability::groupSample(timestamp_t base,
                                                                      Accumulator sum) const {
  // Dividing by an average of 1 changes nothing: skipped, it would put a division's latency on
  // every edge.
  const double total = toDouble(sum);
  return SampleTime{base, average_ == 1 ? total : total / static_cast<double>(average_)};
}

std::size_t FrequencyStability::addProbeEdge(std::span<const timestamp_t> times,
                                             std::size_t index) {
  probe_edges_.push_back(times[index]);
  if (probe_edges_.size() == kProbeEdges) addProbedEdges(false);
  return index + 1;
}

void FrequencyStability::addProbedEdges(bool all) {
  std::vector<timestamp_t> held;
  do {
    held.swap(probe_edges_);  // a restart while they are added must not add them again
    if (held.empty()) return;
    if (held.size() >= kFewestProbeEdges) {
      std::vector<timestamp_t> intervals(held.size() - 1);
      for (std::size_t i = 1; i < held.size(); ++i) intervals[i - 1] = held[i] - held[i - 1];
      const auto middle = intervals.begin() + static_cast<std::ptrdiff_t>(intervals.size() / 2);
      std::nth_element(intervals.begin(), middle, intervals.end());
      if (*middle > 0) {
        edge_period_ = static_cast<double>(*middle);
        has_edge_period_ = true;
      }
    }
    const std::size_t most = held.size() / static_cast<std::size_t>(average_) + 1;
    if (pending_samples_.size() < pending_count_ + most) {
      pending_samples_.resize(pending_count_ + most);
    }
    std::size_t added = 0;
    if (has_edge_period_) {
      while (added < held.size() && has_edge_period_) added = addCheckedEdges(held, added);
    } else {
      // Too few edges, or most intervals empty: nothing to check against.
      for (const timestamp_t time : held) addUncheckedEdge(time);
      added = held.size();
    }
    // A slip among them began a new series: the rest are its first edges, held for its own
    // probe (and added now too when all must be).
    probe_edges_.assign(held.begin() + static_cast<std::ptrdiff_t>(added), held.end());
    held.clear();
  } while (all);
}

void FrequencyStability::addUncheckedEdge(timestamp_t time) {
  before_last_edge_ = last_edge_;
  has_before_last_edge_ = has_last_edge_;
  last_edge_ = time;
  has_last_edge_ = true;
  group_sum_ += static_cast<std::uint64_t>(time - group_base_);
  if (++group_size_ == average_) {
    pending_samples_[pending_count_++] = groupSample(group_base_, group_sum_);
    group_base_ = time;  // the next group begins at this edge
    group_sum_ = 0;
    group_size_ = 0;
  }
}

std::size_t FrequencyStability::addCheckedEdges(std::span<const timestamp_t> times,
                                                std::size_t first) {
  // An interval is fine within half a period of edge_period_: [shortest, shortest + range].
  const auto shortest = static_cast<timestamp_t>(std::ceil(0.5 * edge_period_));
  const auto range = static_cast<std::uint64_t>(
      static_cast<timestamp_t>(std::floor(1.5 * edge_period_)) - shortest);
  // The state in locals: through `this` the compiler would reload and store it on every edge.
  timestamp_t last = last_edge_;
  bool has_last = has_last_edge_;
  Accumulator sum = group_sum_;
  std::int64_t size = group_size_;
  timestamp_t base = group_base_;
  const std::int64_t average = average_;
  SampleTime* const samples = pending_samples_.data();
  std::size_t count = pending_count_;
  // The series' edge before the last one added before index `at`, if it has one: the fields
  // still hold what they held when this call began.
  const auto edgeBefore = [&](std::size_t at, timestamp_t& before) {
    const std::size_t added = at - first;
    if (added >= 2) {
      before = times[at - 2];
      return true;
    }
    before = added == 1 ? last_edge_ : before_last_edge_;
    return added == 1 ? has_last_edge_ : has_before_last_edge_;
  };
  const auto store = [&](std::size_t end) {
    timestamp_t before = 0;
    has_before_last_edge_ = has_last && edgeBefore(end, before);
    before_last_edge_ = before;
    last_edge_ = last;
    has_last_edge_ = has_last;
    group_sum_ = sum;
    group_size_ = size;
    group_base_ = base;
    pending_count_ = count;
  };
  const auto add = [&](timestamp_t time) {
    last = time;
    sum += static_cast<std::uint64_t>(time - base);
    if (++size == average) {
      samples[count++] = groupSample(base, sum);
      base = time;  // the next group begins at this edge
      sum = 0;
      size = 0;
    }
  };
  std::size_t i = first;
  if (!has_last && i < times.size()) {
    add(times[i++]);  // the first edge of the series: no interval to check
    has_last = true;
  }
  for (; i < times.size(); ++i) {
    const timestamp_t time = times[i];
    if (static_cast<std::uint64_t>(time - last - shortest) > range) [[unlikely]] {
      const bool extra = time - last < shortest;
      // Two edges less than half a period apart: the earlier one is the extra one when the
      // later lies nearer one period after the edge before them than it does. If it completed
      // a group, that sample is the newest pending one (held back from the last block).
      bool previous_extra = false;
      timestamp_t before = 0;
      if (extra && edgeBefore(i, before) && (size != 0 || count > 0)) {
        previous_extra = std::abs(static_cast<double>(time - before) - edge_period_) <
                         std::abs(static_cast<double>(last - before) - edge_period_);
        if (previous_extra && size == 0) --count;
      }
      store(i);
      ++restarts_on_slip_;
      restartSeries(time);
      // After a missing edge, or an extra one before it, the edge begins the new series. An
      // extra one (a glitch) itself is left out: as a phase sample it would stand a fraction of
      // a period off, and the deviations of its series with it; the next edge begins the new
      // series.
      return extra && !previous_extra ? i + 1 : i;
    }
    add(time);
  }
  store(times.size());
  return times.size();
}

void FrequencyStability::takePhases(bool hold_newest) {
  const std::size_t held = hold_newest && pending_count_ > 0 ? 1 : 0;
  const std::size_t taken = pending_count_ - held;
  if (phases_.size() < taken) phases_.resize(taken);
  // The state of the series in locals: through `this` the compiler would reload and store it
  // for every sample.
  std::uint64_t samples = series_samples_;
  SampleTime previous = previous_sample_;
  double previous_phase = previous_phase_;
  std::size_t trace_next = trace_next_;
  std::size_t trace_count = trace_count_;
  const auto store = [&] {
    series_samples_ = samples;
    previous_sample_ = previous;
    previous_phase_ = previous_phase;
    trace_next_ = trace_next;
    trace_count_ = trace_count;
  };
  const auto average = static_cast<double>(average_);
  double* const phases = phases_.data();
  std::size_t summed = 0;  // phases already in sums_
  for (std::size_t i = 0; i < taken; ++i) {
    const SampleTime& sample = pending_samples_[i];
    double phase = 0;
    if (samples == 0) {
      series_first_ = sample;
    } else {
      const double elapsed =
          static_cast<double>(sample.base - previous.base) + (sample.offset - previous.offset);
      if (!has_reference_ && elapsed > 0) {
        reference_period_ = elapsed / average;
        has_reference_ = true;
      }
      phase = previous_phase + (elapsed - average * reference_period_);
    }
    phases[i] = phase;
    if (!trace_.empty()) {
      trace_[trace_next] = TracePoint{sample, phase, samples};
      trace_next = trace_next + 1 == trace_.size() ? 0 : trace_next + 1;
      trace_count = std::min(trace_count + 1, trace_.size());
    }
    ++samples;
    previous = sample;
    previous_phase = phase;
    if (std::abs(phase) > kReanchorPhasePs) [[unlikely]] {
      store();
      sums_.add({phases + summed, i + 1 - summed});
      summed = i + 1;
      reanchor();
      previous_phase = previous_phase_;
    }
  }
  store();
  sums_.add({phases + summed, taken - summed});
  samples_total_ += taken;
  if (held != 0) pending_samples_[0] = pending_samples_[pending_count_ - 1];
  pending_count_ = held;
}

void FrequencyStability::reanchor() {
  const double period = meanPeriodLocked();
  if (!(period > 0)) return;
  // New reference: the measured mean period, and the newest sample at phase 0.
  const double slope = static_cast<double>(average_) * (period - reference_period_);
  const double offset = previous_phase_;
  sums_.removeLinear(offset, slope);
  const std::uint64_t newest = series_samples_ - 1;
  for (std::size_t i = 0; i < trace_count_; ++i) {
    TracePoint& point = trace_[i];
    point.phase -=
        offset + slope * (static_cast<double>(point.index) - static_cast<double>(newest));
  }
  previous_phase_ = 0;
  reference_period_ = period;
}

void FrequencyStability::endSeries() {
  addProbedEdges(true);
  takePhases();
  if (series_samples_ >= 2) {
    closed_span_ps_ += static_cast<double>(previous_sample_.base - series_first_.base) +
                       (previous_sample_.offset - series_first_.offset);
    closed_periods_ += (series_samples_ - 1) * static_cast<std::uint64_t>(average_);
  }
  series_samples_ = 0;
  sums_.restart();
  trace_next_ = 0;
  trace_count_ = 0;
  group_sum_ = 0;
  group_size_ = 0;
  has_last_edge_ = false;
  has_before_last_edge_ = false;
  previous_phase_ = 0;
}

void FrequencyStability::restartSeries(timestamp_t time) {
  endSeries();
  // Every series probes its own period: one taken from a series full of glitches, or from a
  // mean period that such a series set, would otherwise stay wrong for every later one.
  has_edge_period_ = false;
  group_base_ = time;
  active_ = !inOverflow();
}

void FrequencyStability::onCaptureStart(timestamp_t time, bool /*fresh*/) {
  restartSeries(time);
}

void FrequencyStability::onOverflowBegin(const Tag& /*tag*/) {
  endSeries();
  active_ = false;
}

void FrequencyStability::onOverflowEnd(const Tag& tag) {
  restartSeries(tag.time);
}

void FrequencyStability::onError(const Tag& tag) {
  restartSeries(tag.time);
}

void FrequencyStability::onCaptureEnd() {
  addProbedEdges(true);
  takePhases();
}

void FrequencyStability::clearData() {
  endSeries();
  sums_.clear();
  active_ = false;
  has_reference_ = false;
  reference_period_ = 0;
  has_edge_period_ = false;
  edge_period_ = 0;
  closed_span_ps_ = 0;
  closed_periods_ = 0;
  samples_total_ = 0;
  restarts_on_slip_ = 0;
}

std::pair<double, std::uint64_t> FrequencyStability::seriesSpans() const {
  double span = closed_span_ps_;
  std::uint64_t periods = closed_periods_;
  if (series_samples_ >= 2) {
    span += static_cast<double>(previous_sample_.base - series_first_.base) +
            (previous_sample_.offset - series_first_.offset);
    periods += (series_samples_ - 1) * static_cast<std::uint64_t>(average_);
  }
  return {span, periods};
}

double FrequencyStability::meanPeriodLocked() const {
  const auto [span, periods] = seriesSpans();
  return periods == 0 ? kNaN : span / static_cast<double>(periods);
}

double FrequencyStability::getMeanPeriod() const {
  auto lock = lockData();
  return meanPeriodLocked();
}

std::uint64_t FrequencyStability::getSampleCount() const {
  auto lock = lockData();
  return samples_total_;
}

FrequencyStabilityData FrequencyStability::getDataObject(double input_frequency) const {
  auto lock = lockData();
  return dataLocked(input_frequency);
}

FrequencyStabilityData FrequencyStability::dataLocked(double input_frequency) const {
  FrequencyStabilityData data;
  const double period_ps = meanPeriodLocked();
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const double tau_ps =
        static_cast<double>(steps_[i]) * static_cast<double>(average_) * period_ps;
    const double tau = tau_ps * 1e-12;
    const AllanSums::Deviations deviations = sums_.deviations(i, tau_ps);
    data.tau.push_back(tau);
    data.adev.push_back(deviations.adev);
    data.mdev.push_back(deviations.mdev);
    data.hdev.push_back(deviations.hdev);
    data.stdd.push_back(deviations.stdd * 1e-12);
    data.adev_scaled.push_back(tau / std::sqrt(3.0) * deviations.adev);
    data.tdev.push_back(tau / std::sqrt(3.0) * deviations.mdev);
    data.hdev_scaled.push_back(tau / std::sqrt(10.0 / 3.0) * deviations.hdev);
  }
  fillTraces(data, input_frequency);
  return data;
}

std::vector<FrequencyStability::TracePoint> FrequencyStability::traceOldestFirst() const {
  std::vector<TracePoint> points(trace_count_);
  if (trace_count_ == 0) return points;
  const std::size_t oldest = (trace_next_ + trace_.size() - trace_count_) % trace_.size();
  for (std::size_t i = 0; i < trace_count_; ++i) points[i] = trace_[(oldest + i) % trace_.size()];
  return points;
}

void FrequencyStability::fillTraces(FrequencyStabilityData& data, double input_frequency) const {
  if (trace_count_ < 2) return;
  // Point 0 is only the predecessor of the first interval.
  const std::vector<TracePoint> points = traceOldestFirst();
  const std::size_t first = points.size() - std::min(trace_len_, points.size() - 1);
  const auto length = static_cast<Eigen::Index>(points.size() - first);

  std::vector<double> intervals;
  double elapsed_total = 0;
  for (std::size_t i = first; i < points.size(); ++i) {
    const double elapsed = static_cast<double>(points[i].time.base - points[i - 1].time.base) +
                           (points[i].time.offset - points[i - 1].time.offset);
    intervals.push_back(elapsed);
    elapsed_total += elapsed;
  }
  const double mean_interval = elapsed_total / static_cast<double>(intervals.size());

  Eigen::MatrixXd design(length, 2);
  Eigen::VectorXd phase(length);
  const double index_mean = 0.5 * static_cast<double>(points[first].index + points.back().index);
  for (Eigen::Index row = 0; row < length; ++row) {
    const TracePoint& point = points[first + static_cast<std::size_t>(row)];
    design(row, 0) = 1.0;
    design(row, 1) = static_cast<double>(point.index) - index_mean;
    phase(row) = point.phase;
  }
  const Eigen::Vector2d line = design.colPivHouseholderQr().solve(phase);
  const Eigen::VectorXd residual = phase - design * line;

  for (std::size_t i = first; i < points.size(); ++i) {
    const double interval = intervals[i - first];
    data.trace_index.push_back(static_cast<double>(points[i].time.base) * 1e-12 +
                               points[i].time.offset * 1e-12);
    data.trace_phase.push_back(residual(static_cast<Eigen::Index>(i - first)) * 1e-12);
    data.trace_frequency.push_back(mean_interval / interval - 1.0);
    data.trace_frequency_absolute.push_back(static_cast<double>(average_) / (interval * 1e-12) -
                                            input_frequency);
  }
}

void FrequencyStability::savePartialState(ResultSet& out) const {
  const std::size_t steps = steps_.size();
  std::vector<double> sums;
  std::vector<std::int64_t> terms;
  for (std::size_t i = 0; i < steps; ++i) {
    const AllanSums::StepTotals step = sums_.totals(i);
    sums.insert(sums.end(), {step.adev_sum, step.mdev_sum, step.hdev_sum, step.difference_terms,
                             step.difference_mean, step.difference_m2});
    terms.insert(terms.end(), {step.adev_terms, step.mdev_terms, step.hdev_terms});
  }
  out.add("allan_sums", "", {steps, 6}, std::move(sums),
          "per step: ADEV, MDEV, HDEV sums (ps^2); count, mean (ps) and squared deviations "
          "(ps^2) of the n-sample differences");
  out.add("allan_terms", "1", {steps, 3}, std::move(terms), "per step: ADEV, MDEV, HDEV terms");
  const auto [span, periods] = seriesSpans();
  out.add("series", "ps", {2}, std::vector<double>{has_reference_ ? reference_period_ : kNaN, span},
          "reference period of the phases (NaN before one), summed spans of the series");
  out.add("series_counts", "1", {3},
          std::vector<std::uint64_t>{periods, samples_total_, restarts_on_slip_},
          "edge periods the spans cover, samples, restarts on slip");
  std::vector<std::int64_t> trace_base;
  std::vector<double> trace_offset, trace_phase;
  std::vector<std::uint64_t> trace_index;
  for (const TracePoint& point : traceOldestFirst()) {
    trace_base.push_back(point.time.base);
    trace_offset.push_back(point.time.offset);
    trace_phase.push_back(point.phase);
    trace_index.push_back(point.index);
  }
  const std::vector<std::size_t> trace{trace_count_};
  out.add("trace_base", "ps", trace, std::move(trace_base),
          "the current series' trace, oldest first");
  out.add("trace_offset", "ps", trace, std::move(trace_offset), "added to trace_base");
  out.add("trace_phase", "ps", trace, std::move(trace_phase), "against the reference period");
  out.add("trace_sample", "1", trace, std::move(trace_index), "index in the series");
}

void FrequencyStability::mergePartial(const ResultSet& later) {
  const std::size_t steps = steps_.size();
  const auto& sums = later.values<double>("allan_sums", steps * 6);
  const auto& terms = later.values<std::int64_t>("allan_terms", steps * 3);
  const auto& series = later.values<double>("series", 2);
  const auto& counts = later.values<std::uint64_t>("series_counts", 3);
  const std::size_t points = later.array("trace_base").shape.at(0);
  if (points > trace_.size()) {
    throw InvalidArgument(
        owner(name()) + ": a partial state with " + std::to_string(points) +
        " trace samples (valid: at most trace_len + 1 = " + std::to_string(trace_.size()) + ")");
  }
  const auto& trace_base = later.values<std::int64_t>("trace_base", points);
  const auto& trace_offset = later.values<double>("trace_offset", points);
  const auto& trace_phase = later.values<double>("trace_phase", points);
  const auto& trace_index = later.values<std::uint64_t>("trace_sample", points);

  endSeries();  // the later range is a series of its own, as after a gap
  // The later range's n-sample differences, taken against its reference period, moved to ours.
  double shift = 0;
  if (!std::isnan(series[0])) {
    if (!has_reference_) {
      reference_period_ = series[0];
      has_reference_ = true;
    }
    shift = static_cast<double>(average_) * (series[0] - reference_period_);
  }
  for (std::size_t i = 0; i < steps; ++i) {
    const double* step_sums = &sums[6 * i];
    const std::int64_t* step_terms = &terms[3 * i];
    sums_.merge(i, AllanSums::StepTotals{step_sums[0], step_sums[1], step_sums[2], step_terms[0],
                                         step_terms[1], step_terms[2], step_sums[3],
                                         step_sums[4] + static_cast<double>(steps_[i]) * shift,
                                         step_sums[5]});
  }
  closed_span_ps_ += series[1];
  closed_periods_ += counts[0];
  samples_total_ += counts[1];
  restarts_on_slip_ += counts[2];
  for (std::size_t i = 0; i < points; ++i) {
    trace_[i] =
        TracePoint{SampleTime{trace_base[i], trace_offset[i]}, trace_phase[i], trace_index[i]};
  }
  trace_count_ = points;
  trace_next_ = trace_.empty() ? 0 : points % trace_.size();
}

void FrequencyStability::collectResults(ResultSet& out) const {
  FrequencyStabilityData data = dataLocked(0);
  const std::vector<std::size_t> steps{steps_.size()};
  const std::vector<std::size_t> trace{data.trace_index.size()};
  out.add("tau", "s", steps, std::move(data.tau), "step * average * measured mean period");
  out.add("adev", "1", steps, std::move(data.adev),
          "overlapping Allan deviation; NaN for steps longer than the data");
  out.add("mdev", "1", steps, std::move(data.mdev), "overlapping modified Allan deviation");
  out.add("hdev", "1", steps, std::move(data.hdev), "overlapping Hadamard deviation");
  out.add("stdd", "s", steps, std::move(data.stdd),
          "standard deviation of the time of step * average periods");
  out.add("adev_scaled", "s", steps, std::move(data.adev_scaled), "tau / sqrt(3) * adev");
  out.add("tdev", "s", steps, std::move(data.tdev), "time deviation, tau / sqrt(3) * mdev");
  out.add("hdev_scaled", "s", steps, std::move(data.hdev_scaled), "tau / sqrt(10/3) * hdev");
  out.add("trace_index", "s", trace, std::move(data.trace_index),
          "stream time of the last trace_len samples of the current series");
  out.add("trace_phase", "s", trace, std::move(data.trace_phase),
          "phase of each trace sample from a least-squares line over the trace");
  out.add("trace_frequency", "1", trace, std::move(data.trace_frequency),
          "relative frequency of each sample interval against the trace's mean");
  out.add("trace_frequency_absolute", "Hz", trace, std::move(data.trace_frequency_absolute),
          "frequency of each sample interval");
  out.facts.set("samples", static_cast<std::int64_t>(samples_total_));
  out.facts.set("mean_period_ps", meanPeriodLocked());
  out.facts.set("restarts_on_slip", static_cast<std::int64_t>(restarts_on_slip_));
}

}  // namespace tagflow
