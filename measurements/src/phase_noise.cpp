#include "tagflow/measurements/phase_noise.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr std::int64_t kMaxSamplesPerOctave = 65536;
constexpr std::size_t kWarmupEdges = 1024;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

const ParameterSchema& PhaseNoise::schema() {
  static const ParameterSchema schema(
      "PhaseNoise",
      "single-sideband phase noise L(f) of one or more clocks, octave-decimated Welch spectra",
      {ParameterSpec::channels("channels").help("clock channels, one spectrum each"),
       ParameterSpec::integer("samples_per_octave")
           .atLeast(2)
           .atMost(kMaxSamplesPerOctave)
           .byDefault(std::int64_t{kDefaultSamplesPerOctave})
           .help("points per octave")});
  return schema;
}

double PhaseNoiseSpectrum::integratedJitter(double lower, double upper) const {
  double phase_variance = 0;  // rad^2
  for (std::size_t i = 0; i < offset.size(); ++i) {
    const double inside = std::min(upper, offset[i] + 0.5 * bin_width[i]) -
                          std::max(lower, offset[i] - 0.5 * bin_width[i]);
    if (inside > 0) phase_variance += 2 * std::pow(10.0, phase_noise[i] / 10) * inside;
  }
  return std::sqrt(phase_variance) / (2 * std::numbers::pi * frequency);
}

PhaseNoise::PhaseNoise(std::string name, std::vector<channel_t> channels,
                       std::int64_t samples_per_octave)
    : Measurement(
          schema(), std::move(name),
          Parameters{{"channels", std::vector<std::int64_t>(channels.begin(), channels.end())},
                     {"samples_per_octave", samples_per_octave}}),
      samples_per_octave_(samples_per_octave),
      times_(channels, "PhaseNoise '" + this->name() + "'"),
      periodogram_(
          std::make_unique<SegmentPeriodogram>(8 * static_cast<std::size_t>(samples_per_octave_))) {
  for (std::size_t i = 0; i < times_.size(); ++i) {
    clocks_.push_back(std::make_unique<Clock>(*periodogram_));
  }
}

void PhaseNoise::processTimeTags(std::span<const Tag> tags) {
  if (!active_ || inOverflow()) return;
  times_.gather(tags, [&](channel_t channel) { return sharedTimes(tags, channel); });
  for (std::size_t slot = 0; slot < clocks_.size(); ++slot) {
    process(*clocks_[slot], times_.times(slot));
  }
}

void PhaseNoise::process(Clock& clock, std::span<const timestamp_t> times) {
  std::size_t i = 0;
  for (; i < times.size() && !clock.has_period; ++i) warmUp(clock, times[i]);
  addEdges(clock, times.subspan(i));
  pushPhases(clock, true);
}

void PhaseNoise::pushPhases(Clock& clock, bool hold_newest) {
  const std::size_t count = clock.phase_count;
  const std::size_t held = hold_newest && count > 0 ? 1 : 0;
  clock.spectrum.push({clock.phases.data(), count - held});
  if (held != 0) {
    if (count >= 2) clock.held_step = clock.phases[count - 1] - clock.phases[count - 2];
    clock.phases[0] = clock.phases[count - 1];
  }
  clock.phase_count = held;
}

void PhaseNoise::warmUp(Clock& clock, timestamp_t time) {
  clock.warmup.push_back(time);
  if (clock.warmup.size() < kWarmupEdges) return;
  const double span = static_cast<double>(clock.warmup.back() - clock.warmup.front());
  std::vector<timestamp_t> held;
  held.swap(clock.warmup);  // a restart while they are added clears clock.warmup
  if (span > 0) {
    setPeriod(clock, span / static_cast<double>(kWarmupEdges - 1));
    addEdges(clock, held);
  }
  held.clear();
  clock.warmup.swap(held);
}

void PhaseNoise::setPeriod(Clock& clock, double period) {
  clock.has_period = true;
  clock.period = period;
  clock.period_whole = static_cast<timestamp_t>(std::floor(period));
  clock.period_fraction = period - std::floor(period);
}

void PhaseNoise::addEdges(Clock& clock, std::span<const timestamp_t> times) {
  // The state in locals: through `clock` the compiler would reload it after every store of a
  // phase (a double store may alias the double fields).
  timestamp_t whole = clock.predicted_whole;
  double fraction = clock.predicted_fraction;
  double previous = clock.previous_phase;
  std::uint64_t edges = clock.series_edges;
  timestamp_t first = clock.series_first;
  timestamp_t last = clock.series_last;
  timestamp_t step_whole = clock.period_whole;
  double step_fraction = clock.period_fraction;
  double tolerance = 0.5 * clock.period;
  if (clock.phases.size() < clock.phase_count + times.size()) {
    clock.phases.resize(clock.phase_count + times.size());
  }
  double* const phases = clock.phases.data();
  std::size_t count = clock.phase_count;
  const auto store = [&] {
    clock.predicted_whole = whole;
    clock.predicted_fraction = fraction;
    clock.previous_phase = previous;
    clock.series_edges = edges;
    clock.series_first = first;
    clock.series_last = last;
    clock.phase_count = count;
  };
  for (const timestamp_t time : times) {
    double phase = 0;
    if (edges > 0) {
      phase = static_cast<double>(time - whole) - fraction;
      if (std::abs(phase - previous) > tolerance) [[unlikely]] {
        const bool extra_edge = phase < previous;
        // Two edges less than half a period apart: the earlier one is the extra one when the
        // later lies nearer one period after the edge before them than it does. Its interval
        // to that edge is the period plus its phase step, in whole ps.
        bool previous_extra = false;
        if (extra_edge && edges >= 2 && count > 0) {
          const double previous_step = count >= 2 ? previous - phases[count - 2] : clock.held_step;
          previous_extra =
              std::abs(clock.period + previous_step + (phase - previous)) < std::abs(previous_step);
          if (previous_extra) {
            --count;
            --edges;
            last -= std::llround(clock.period + previous_step);
          }
        }
        store();
        ++clock.restarts_on_slip;
        endSeries(clock);  // may refine the period
        count = clock.phase_count;
        edges = 0;
        step_whole = clock.period_whole;
        step_fraction = clock.period_fraction;
        tolerance = 0.5 * clock.period;
        // After a missing edge, or an extra one before it, this edge begins the new series.
        // An extra one (a glitch) itself is left out: as the first sample of the new series it
        // would stand a fraction of a period off the samples after it. The next edge begins the
        // new series, as after an Error.
        if (extra_edge && !previous_extra) continue;
      }
    }
    if (edges == 0) {
      phase = 0;
      first = time;
      whole = time;
      fraction = 0;
    }
    phases[count++] = phase;
    previous = phase;
    last = time;
    ++edges;
    fraction += step_fraction;
    if (fraction >= 1) {
      fraction -= 1;
      ++whole;
    }
    whole += step_whole;
  }
  store();
}

void PhaseNoise::endSeries(Clock& clock) {
  pushPhases(clock, false);
  clock.spectrum.restart();
  clock.warmup.clear();
  if (clock.series_edges >= 2) {
    clock.closed_span += clock.series_last - clock.series_first;
    clock.closed_periods += clock.series_edges - 1;
    // Later series take their phase against the best period known.
    setPeriod(clock, meanPeriod(clock));
  }
  clock.series_edges = 0;
}

void PhaseNoise::endAllSeries() {
  for (auto& clock : clocks_) endSeries(*clock);
}

void PhaseNoise::onCaptureStart(timestamp_t /*time*/, bool /*fresh*/) {
  endAllSeries();
  active_ = !inOverflow();
}

void PhaseNoise::onOverflowBegin(const Tag& /*tag*/) {
  endAllSeries();
  active_ = false;
}

void PhaseNoise::onOverflowEnd(const Tag& /*tag*/) {
  endAllSeries();
  active_ = true;
}

void PhaseNoise::onError(const Tag& /*tag*/) {
  endAllSeries();
}

void PhaseNoise::onCaptureEnd() {
  for (auto& clock : clocks_) pushPhases(*clock, false);
}

void PhaseNoise::clearData() {
  for (auto& clock : clocks_) clock = std::make_unique<Clock>(*periodogram_);
  active_ = false;
}

std::pair<timestamp_t, std::uint64_t> PhaseNoise::seriesSpans(const Clock& clock) {
  timestamp_t span = clock.closed_span;
  std::uint64_t periods = clock.closed_periods;
  if (clock.series_edges >= 2) {
    span += clock.series_last - clock.series_first;
    periods += clock.series_edges - 1;
  }
  return {span, periods};
}

double PhaseNoise::meanPeriod(const Clock& clock) const {
  const auto [span, periods] = seriesSpans(clock);
  return periods == 0 ? kNaN : static_cast<double>(span) / static_cast<double>(periods);
}

PhaseNoiseSpectrum PhaseNoise::spectrumOf(const Clock& clock) const {
  PhaseNoiseSpectrum result;
  const double carrier = 1e12 / meanPeriod(clock);
  result.frequency = carrier;
  if (!std::isfinite(carrier)) return result;
  // Phase in rad per ps of time deviation.
  const double radians_per_ps = 2 * std::numbers::pi * carrier * 1e-12;
  for (const OctaveWelch::Point& point : clock.spectrum.spectrum()) {
    const double time_psd = point.density / carrier;  // ps^2 / Hz, one-sided
    result.offset.push_back(point.frequency * carrier);
    result.bin_width.push_back(point.width * carrier);
    result.phase_noise.push_back(10 * std::log10(radians_per_ps * radians_per_ps * time_psd / 2));
    result.averaged_sequences = point.segments;  // the last point is in the highest octave
    result.segments.push_back(point.segments);
  }
  return result;
}

std::vector<PhaseNoiseSpectrum> PhaseNoise::getDataObject() const {
  auto lock = lockData();
  std::vector<PhaseNoiseSpectrum> spectra;
  for (const auto& clock : clocks_) spectra.push_back(spectrumOf(*clock));
  return spectra;
}

std::vector<double> PhaseNoise::getIntegratedJitter(double lower, double upper) const {
  std::vector<double> jitter;
  for (const PhaseNoiseSpectrum& spectrum : getDataObject()) {
    jitter.push_back(spectrum.integratedJitter(lower, upper));
  }
  return jitter;
}

void PhaseNoise::savePartialState(ResultSet& out) const {
  std::vector<std::int64_t> stages, spans;
  std::vector<std::uint64_t> segments, periods, restarts;
  std::vector<double> power;
  for (const auto& clock : clocks_) {
    const OctaveWelch& spectrum = clock->spectrum;
    stages.push_back(static_cast<std::int64_t>(spectrum.stages()));
    for (std::size_t k = 0; k < spectrum.stages(); ++k) {
      segments.push_back(spectrum.stageSegments(k));
      const std::vector<double>& stage_power = spectrum.stagePower(k);
      power.insert(power.end(), stage_power.begin(), stage_power.end());
    }
    const auto [span, covered] = seriesSpans(*clock);
    spans.push_back(span);
    periods.push_back(covered);
    restarts.push_back(clock->restarts_on_slip);
  }
  const std::vector<std::size_t> channels{clocks_.size()};
  out.add("stages", "1", channels, std::move(stages), "octave stages per channel");
  out.add("stage_segments", "1", {segments.size()}, std::move(segments),
          "Welch segments of every stage, channel by channel");
  out.add("stage_power", "ps^2", {power.size()}, std::move(power),
          "summed periodograms of every stage's bins, channel by channel");
  out.add("span", "ps", channels, std::move(spans), "summed spans of the series");
  out.add("periods", "1", channels, std::move(periods), "edge periods the spans cover");
  out.add("restarts_on_slip", "1", channels, std::move(restarts), "series restarted on a slip");
}

void PhaseNoise::mergePartial(const ResultSet& later) {
  const std::size_t channels = clocks_.size();
  const auto& stages = later.values<std::int64_t>("stages", channels);
  std::size_t stage_count = 0;
  std::size_t bins = 0;
  for (const std::int64_t count : stages) {
    if (count < 0 || count > static_cast<std::int64_t>(OctaveWelch::kMaxStages)) {
      throw InvalidArgument("PhaseNoise '" + name() + "': a partial state with " +
                            std::to_string(count) + " octave stages (valid: 0 to " +
                            std::to_string(OctaveWelch::kMaxStages) + ")");
    }
    for (std::size_t k = 0; k < static_cast<std::size_t>(count); ++k) {
      bins += clocks_.front()->spectrum.binCount(k);
    }
    stage_count += static_cast<std::size_t>(count);
  }
  const auto& segments = later.values<std::uint64_t>("stage_segments", stage_count);
  const auto& power = later.values<double>("stage_power", bins);
  const auto& spans = later.values<std::int64_t>("span", channels);
  const auto& periods = later.values<std::uint64_t>("periods", channels);
  const auto& restarts = later.values<std::uint64_t>("restarts_on_slip", channels);

  endAllSeries();  // the later range starts series of its own, as after a gap
  std::size_t stage = 0;
  std::size_t bin = 0;
  for (std::size_t c = 0; c < channels; ++c) {
    Clock& clock = *clocks_[c];
    for (std::size_t k = 0; k < static_cast<std::size_t>(stages[c]); ++k, ++stage) {
      const std::size_t count = clock.spectrum.binCount(k);
      clock.spectrum.mergeStage(k, segments[stage], {power.data() + bin, count});
      bin += count;
    }
    clock.closed_span += spans[c];
    clock.closed_periods += periods[c];
    clock.restarts_on_slip += restarts[c];
    if (clock.closed_periods > 0) setPeriod(clock, meanPeriod(clock));
  }
}

void PhaseNoise::collectResults(ResultSet& out) const {
  std::vector<PhaseNoiseSpectrum> spectra;
  std::size_t points = 0;
  for (const auto& clock : clocks_) {
    spectra.push_back(spectrumOf(*clock));
    points = std::max(points, spectra.back().offset.size());
  }
  const std::size_t channels = spectra.size();
  std::vector<double> offset(channels * points, kNaN), noise(channels * points, kNaN);
  std::vector<std::uint64_t> segments(channels * points, 0);
  std::vector<double> carrier, jitter;
  std::vector<std::uint64_t> sequences;
  std::vector<std::int64_t> restarts;
  for (std::size_t c = 0; c < channels; ++c) {
    const PhaseNoiseSpectrum& spectrum = spectra[c];
    std::copy(spectrum.offset.begin(), spectrum.offset.end(), offset.begin() + c * points);
    std::copy(spectrum.phase_noise.begin(), spectrum.phase_noise.end(), noise.begin() + c * points);
    std::copy(spectrum.segments.begin(), spectrum.segments.end(), segments.begin() + c * points);
    sequences.push_back(spectrum.averaged_sequences);
    carrier.push_back(spectrum.frequency);
    jitter.push_back(spectrum.offset.empty() ? kNaN : spectrum.integratedJitter());
    restarts.push_back(static_cast<std::int64_t>(clocks_[c]->restarts_on_slip));
  }
  out.add("offset", "Hz", {channels, points}, std::move(offset),
          "offset frequency of each point, per channel; NaN pads shorter rows");
  out.add("phase_noise", "dBc/Hz", {channels, points}, std::move(noise),
          "single-sideband phase noise L(f) = S_phi(f) / 2, per channel");
  out.add("segments", "1", {channels, points}, std::move(segments),
          "Welch segments averaged into each point");
  out.add("averaged_sequences", "1", {channels}, std::move(sequences),
          "Welch segments averaged in the highest octave");
  out.add("frequency", "Hz", {channels}, std::move(carrier), "measured carrier frequency");
  out.add("integrated_jitter", "s", {channels}, std::move(jitter),
          "RMS jitter integrated over every offset of the spectrum");
  out.add("restarts_on_slip", "1", {channels}, std::move(restarts),
          "series restarted because an edge interval was off by more than half a period");
}

}  // namespace tagflow
