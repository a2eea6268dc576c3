#include "tagflow/io/sources/synthetic_source.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr double kExpectedTagsPerWindow = 8192;
constexpr double kTruncationSigmas = 6;
// Rates and frequencies: below 1 mHz the gaps and periods in ps leave the range of
// timestamp_t arithmetic; above 1e10 Hz a stream is no longer a plausible detector's.
constexpr double kMinRate = 1e-3;
constexpr double kMaxRate = 1e10;
// Stream times stay within +-2^62 ps (about 53 days), as the vendor readers' do, so that a
// delay, jitter or bin added to a time cannot overflow: an endless stream ends there too.
constexpr timestamp_t kTimeLimit = timestamp_t{1} << 62;
// Generation runs one guard interval (delays plus jitter) ahead of the stream; the events of
// that interval are held in memory, so their expected number is bounded.
constexpr std::uint64_t kMaxEventsAhead = std::uint64_t{1} << 24;

constexpr double kTwoPi = 6.283185307179586;

// Bounds that keep a noisy clock's edges in order (every period stays within a few percent
// of its nominal length), so that generation can stop at the first edge past a window.
void validateClockNoise(const std::string& where, const SyntheticChannel& c) {
  const ClockNoise& n = c.noise;
  const auto fail = [&](const std::string& what, double value, const std::string& range) {
    throw InvalidArgument(where + ": " + what + " " + std::to_string(value) +
                          " is invalid (valid: " + range + ")");
  };
  if (!(n.white_fm >= 0 && n.white_fm * std::sqrt(c.frequency_hz) <= 1e-2)) {
    fail("white_fm", n.white_fm,
         ">= 0 and <= 0.01 / sqrt(frequency in Hz), i.e. at most 1 % frequency error per period");
  }
  if (!(n.random_walk_fm >= 0 && n.random_walk_fm <= 1e-6)) {
    fail("random_walk_fm", n.random_walk_fm, "0..1e-6");
  }
  if (!(std::abs(n.drift_per_s) <= 1e-6)) fail("drift", n.drift_per_s, "-1e-6..1e-6 per second");
  if (!(n.pm_index >= 0 && n.pm_index <= 1e6)) fail("pm_index", n.pm_index, "0..1e6 rad");
  if (n.pm_index > 0 && !(n.pm_frequency_hz > 0 && n.pm_frequency_hz < c.frequency_hz / 2)) {
    fail("pm_frequency", n.pm_frequency_hz, "> 0 and < half the clock frequency");
  }
  if (!(n.pm_frequency_hz >= 0)) fail("pm_frequency", n.pm_frequency_hz, ">= 0");
  if (n.pm_index * n.pm_frequency_hz > 0.1 * c.frequency_hz) {
    fail("pm_index * pm_frequency", n.pm_index * n.pm_frequency_hz,
         "<= 0.1 * frequency, so that periods stay positive");
  }
}

// How far generation runs ahead of the stream: every partner's delay plus 6 sigma of every
// jitter.
timestamp_t guardPs(const std::vector<SyntheticChannel>& channels) {
  timestamp_t guard = 1;
  for (const auto& c : channels) {
    if (c.kind == SyntheticChannel::Kind::Partner) guard += std::abs(c.delay_ps);
    guard += static_cast<timestamp_t>(std::ceil(kTruncationSigmas * c.jitter_ps));
  }
  return guard;
}

std::string channelWhere(std::size_t index, const SyntheticChannel& channel) {
  return "synthetic channel #" + std::to_string(index) + " (channel " +
         std::to_string(channel.channel) + ")";
}

// Inlined, unlike std::llround (a library call on the generator's hot path).
timestamp_t roundToPs(double value) {
  return static_cast<timestamp_t>(std::floor(value + 0.5));
}

}  // namespace

SyntheticChannel SyntheticChannel::poisson(channel_t channel, double rate_hz) {
  SyntheticChannel c;
  c.kind = Kind::Poisson;
  c.channel = channel;
  c.rate_hz = rate_hz;
  return c;
}

bool ClockNoise::any() const {
  return white_fm != 0 || random_walk_fm != 0 || drift_per_s != 0 || pm_index != 0 ||
         pm_frequency_hz != 0;
}

SyntheticChannel SyntheticChannel::clock(channel_t channel, double frequency_hz, double jitter_ps,
                                         ClockNoise noise) {
  SyntheticChannel c;
  c.kind = Kind::Clock;
  c.channel = channel;
  c.frequency_hz = frequency_hz;
  c.jitter_ps = jitter_ps;
  c.noise = noise;
  return c;
}

SyntheticChannel SyntheticChannel::partner(channel_t channel, channel_t partner_of,
                                           timestamp_t delay_ps, double jitter_ps,
                                           double probability) {
  SyntheticChannel c;
  c.kind = Kind::Partner;
  c.channel = channel;
  c.partner_of = partner_of;
  c.delay_ps = delay_ps;
  c.jitter_ps = jitter_ps;
  c.probability = probability;
  return c;
}

double SyntheticConfig::totalRateHz() const {
  std::vector<double> rates;
  double total = 0;
  for (const auto& c : channels) {
    double rate = 0;
    if (c.kind == SyntheticChannel::Kind::Poisson) rate = c.rate_hz;
    if (c.kind == SyntheticChannel::Kind::Clock) rate = c.frequency_hz;
    if (c.kind == SyntheticChannel::Kind::Partner) {
      for (std::size_t i = 0; i < rates.size(); ++i) {
        if (channels[i].channel == c.partner_of) rate = rates[i] * c.probability;
      }
    }
    rates.push_back(rate);
    total += rate;
  }
  return total;
}

void SyntheticConfig::validate() const {
  if (channels.empty()) throw InvalidArgument("synthetic source: channels must not be empty");
  if (block_size < 1 || block_size > (std::size_t{1} << 26)) {
    throw InvalidArgument("synthetic source: block_size " + std::to_string(block_size) +
                          " is invalid (valid: 1..67108864)");
  }
  if (max_block_duration_ps <= 0 || max_block_duration_ps > kTimeLimit) {
    throw InvalidArgument("synthetic source: max_block_duration_ps " +
                          std::to_string(max_block_duration_ps) + " is invalid (valid: 1.." +
                          std::to_string(kTimeLimit) + ")");
  }
  if (duration_ps == 0 || duration_ps < -1) {
    throw InvalidArgument("synthetic source: duration_ps " + std::to_string(duration_ps) +
                          " is invalid (valid: > 0, or -1 for endless)");
  }
  if (start_time_ps < -kTimeLimit || start_time_ps > kTimeLimit) {
    throw InvalidArgument("synthetic source: start_time_ps " + std::to_string(start_time_ps) +
                          " is invalid (valid: " + std::to_string(-kTimeLimit) + ".." +
                          std::to_string(kTimeLimit) + ", about +-53 days)");
  }
  if (duration_ps > 0 && start_time_ps > kTimeLimit - duration_ps) {
    throw InvalidArgument(
        "synthetic source: start_time_ps + duration_ps = " + std::to_string(start_time_ps) + " + " +
        std::to_string(duration_ps) + " ps ends too late (valid: <= " + std::to_string(kTimeLimit) +
        " ps, about 53 days)");
  }
  for (std::size_t i = 0; i < channels.size(); ++i) {
    const auto& c = channels[i];
    const std::string where = channelWhere(i, c);
    if (c.channel == CHANNEL_UNUSED) throw InvalidArgument(where + ": channel is CHANNEL_UNUSED");
    for (std::size_t j = 0; j < i; ++j) {
      if (channels[j].channel == c.channel) {
        throw InvalidArgument(where + ": duplicate channel " + std::to_string(c.channel));
      }
    }
    if (!(c.jitter_ps >= 0 && c.jitter_ps <= 1e12)) {
      throw InvalidArgument(where + ": jitter_ps " + std::to_string(c.jitter_ps) +
                            " is invalid (valid: 0..1e12)");
    }
    if (c.kind != SyntheticChannel::Kind::Clock && c.noise.any()) {
      throw InvalidArgument(where +
                            ": clock noise (white_fm, random_walk_fm, drift, pm_index, "
                            "pm_frequency) is only valid for kind clock");
    }
    switch (c.kind) {
      case SyntheticChannel::Kind::Poisson:
        if (!(c.rate_hz >= kMinRate && c.rate_hz <= kMaxRate)) {
          throw InvalidArgument(where + ": rate " + std::to_string(c.rate_hz) +
                                " Hz is invalid (valid: 1e-3..1e10)");
        }
        break;
      case SyntheticChannel::Kind::Clock:
        if (!(c.frequency_hz >= kMinRate && c.frequency_hz <= kMaxRate)) {
          throw InvalidArgument(where + ": frequency " + std::to_string(c.frequency_hz) +
                                " Hz is invalid (valid: 1e-3..1e10)");
        }
        validateClockNoise(where, c);
        break;
      case SyntheticChannel::Kind::Partner: {
        bool found = false;
        for (std::size_t j = 0; j < i; ++j) found = found || channels[j].channel == c.partner_of;
        if (!found) {
          throw InvalidArgument(where + ": partner_of " + std::to_string(c.partner_of) +
                                " is not a channel listed before it");
        }
        if (!(c.probability > 0 && c.probability <= 1)) {
          throw InvalidArgument(where + ": probability " + std::to_string(c.probability) +
                                " is invalid (valid: > 0 and <= 1)");
        }
        if (std::abs(c.delay_ps) > 1'000'000'000'000) {
          throw InvalidArgument(where + ": delay " + std::to_string(c.delay_ps) +
                                " ps is invalid (valid: -1e12..1e12)");
        }
        break;
      }
    }
  }
  timestamp_t previous_end = start_time_ps;
  for (std::size_t i = 0; i < overflows.size(); ++i) {
    const auto& o = overflows[i];
    const std::string where = "synthetic overflow #" + std::to_string(i);
    if (o.begin_ps < previous_end || o.end_ps <= o.begin_ps || o.end_ps > kTimeLimit) {
      throw InvalidArgument(
          where + " [" + std::to_string(o.begin_ps) + ", " + std::to_string(o.end_ps) +
          ") ps is invalid (valid: begin >= " + std::to_string(previous_end) +
          " (stream start or the previous end), end > begin, end <= " + std::to_string(kTimeLimit) +
          ")");
    }
    if (duration_ps > 0 && o.end_ps >= start_time_ps + duration_ps) {
      throw InvalidArgument(where + " ends at " + std::to_string(o.end_ps) +
                            " ps, not before the stream end " +
                            std::to_string(start_time_ps + duration_ps) + " ps");
    }
    previous_end = o.end_ps;
  }
  const timestamp_t guard = guardPs(channels);
  const double ahead = totalRateHz() * static_cast<double>(guard) * 1e-12;
  if (ahead > static_cast<double>(kMaxEventsAhead)) {
    std::ostringstream message;
    message << "synthetic source: the channels' delays and jitter (" << guard
            << " ps generated ahead of the stream) at " << totalRateHz() << " Hz in all hold about "
            << ahead << " events in memory (valid: at most " << kMaxEventsAhead
            << "; lower delay_ps, jitter_ps or the rates)";
    throw InvalidArgument(message.str());
  }
}

SyntheticSource::SyntheticSource(SyntheticConfig config) : config_(std::move(config)) {
  config_.validate();
  const double window = kExpectedTagsPerWindow / config_.totalRateHz() * 1e12;
  window_ps_ = static_cast<timestamp_t>(std::clamp(window, 1e3, 1e12));
  guard_ps_ = guardPs(config_.channels);
  states_.resize(config_.channels.size());
  for (std::size_t i = 0; i < config_.channels.size(); ++i) {
    const auto& c = config_.channels[i];
    auto& state = states_[i];
    state.random.seed(config_.seed * 0x9E3779B97F4A7C15ULL + i + 1);
    if (c.kind == SyntheticChannel::Kind::Poisson) {
      state.next_poisson = config_.start_time_ps;
    } else if (c.kind == SyntheticChannel::Kind::Clock) {
      const double period = 1e12 / c.frequency_hz;
      state.period_whole = static_cast<timestamp_t>(std::floor(period));
      state.period_fraction = period - std::floor(period);
    } else {
      for (std::size_t j = 0; j < i; ++j) {
        if (config_.channels[j].channel == c.partner_of) state.parent = j;
      }
    }
  }
  stream_end_ = config_.duration_ps > 0 ? config_.start_time_ps + config_.duration_ps : kTimeLimit;
  finalised_until_ = config_.start_time_ps;
  next_begin_ = config_.start_time_ps;
  missed_.assign(config_.channels.size(), 0);
}

std::string SyntheticSource::describe() const {
  std::ostringstream out;
  out << "synthetic seed=" << config_.seed << " block_size=" << config_.block_size << " channels=[";
  for (std::size_t i = 0; i < config_.channels.size(); ++i) {
    const auto& c = config_.channels[i];
    out << (i ? "; " : "") << c.channel << ":";
    switch (c.kind) {
      case SyntheticChannel::Kind::Poisson:
        out << "poisson " << c.rate_hz << " Hz";
        break;
      case SyntheticChannel::Kind::Clock:
        out << "clock " << c.frequency_hz << " Hz jitter " << c.jitter_ps << " ps";
        if (c.noise.white_fm != 0) out << " white_fm " << c.noise.white_fm;
        if (c.noise.random_walk_fm != 0) out << " random_walk_fm " << c.noise.random_walk_fm;
        if (c.noise.drift_per_s != 0) out << " drift " << c.noise.drift_per_s << "/s";
        if (c.noise.pm_index != 0) {
          out << " pm " << c.noise.pm_index << " rad at " << c.noise.pm_frequency_hz << " Hz";
        }
        break;
      case SyntheticChannel::Kind::Partner:
        out << "partner of " << c.partner_of << " delay " << c.delay_ps << " ps jitter "
            << c.jitter_ps << " ps p " << c.probability;
        break;
    }
  }
  out << "] overflows=" << config_.overflows.size();
  if (config_.duration_ps > 0) out << " duration_ps=" << config_.duration_ps;
  return out.str();
}

bool SyntheticSource::streamDone() const {
  return finalised_until_ >= stream_end_;
}

double SyntheticSource::truncatedGaussian(ChannelState& state, double sigma) {
  if (sigma <= 0) return 0;
  double value;
  do {
    value = state.normal(state.random);
  } while (std::abs(value) > kTruncationSigmas);
  return value * sigma;
}

void SyntheticSource::generateChannel(std::size_t index, timestamp_t until) {
  const auto& c = config_.channels[index];
  auto& state = states_[index];
  state.generated.clear();
  switch (c.kind) {
    case SyntheticChannel::Kind::Poisson: {
      std::exponential_distribution<double> gap(c.rate_hz * 1e-12);
      while (state.next_poisson < until) {
        state.generated.push_back(state.next_poisson);
        state.next_poisson += std::max<timestamp_t>(1, roundToPs(gap(state.random)));
      }
      break;
    }
    case SyntheticChannel::Kind::Clock: {
      const bool noisy = c.noise.any();
      for (;;) {
        const timestamp_t since_start =
            state.next_edge * state.period_whole +
            roundToPs(static_cast<double>(state.next_edge) * state.period_fraction);
        const timestamp_t ideal = config_.start_time_ps + since_start;
        const double deviation = noisy ? clockDeviationPs(c, state, since_start) : 0.0;
        // The white jitter stays within the guard; the smooth deviation decides the window.
        if (static_cast<double>(ideal) + deviation >= static_cast<double>(until)) break;
        state.generated.push_back(ideal +
                                  roundToPs(deviation + truncatedGaussian(state, c.jitter_ps)));
        if (noisy) advanceClockDeviation(c, state);
        ++state.next_edge;
      }
      break;
    }
    case SyntheticChannel::Kind::Partner: {
      std::bernoulli_distribution echo(c.probability);
      for (timestamp_t parent_time : states_[state.parent].generated) {
        if (!echo(state.random)) continue;
        state.generated.push_back(parent_time + c.delay_ps +
                                  roundToPs(truncatedGaussian(state, c.jitter_ps)));
      }
      break;
    }
  }
  // Jitter can reorder a channel's own events slightly; keep each channel's queue sorted.
  const std::size_t old_size = state.pending.size();
  state.pending.insert(state.pending.end(), state.generated.begin(), state.generated.end());
  if (!std::is_sorted(
          state.pending.begin() + static_cast<std::ptrdiff_t>(old_size > 0 ? old_size - 1 : 0),
          state.pending.end())) {
    std::sort(state.pending.begin(), state.pending.end());
  }
}

double SyntheticSource::clockDeviationPs(const SyntheticChannel& channel, const ChannelState& state,
                                         timestamp_t since_start) const {
  const ClockNoise& noise = channel.noise;
  const double t = static_cast<double>(since_start) * 1e-12;  // s
  double deviation = state.deviation.frequency_noise_ps;
  // f = f0 (1 + d t) advances the phase by d t^2 / 2 periods' worth of time: edges come early.
  deviation -= 0.5 * noise.drift_per_s * t * t * 1e12;
  if (noise.pm_index != 0) {
    deviation -= noise.pm_index / (kTwoPi * channel.frequency_hz) * 1e12 *
                 std::sin(kTwoPi * state.deviation.modulation_cycles);
  }
  return deviation;
}

void SyntheticSource::advanceClockDeviation(const SyntheticChannel& channel, ChannelState& state) {
  const ClockNoise& noise = channel.noise;
  const double period_s = 1.0 / channel.frequency_hz;
  ClockDeviation& d = state.deviation;
  // White FM: sigma_y(tau) = sigma sqrt(T / tau) for a per-period sigma; random-walk FM with a
  // per-period step q has sigma_y^2(tau) -> q^2 tau / (3 T).
  const double y = d.random_walk_y + truncatedGaussian(state, noise.white_fm / std::sqrt(period_s));
  d.frequency_noise_ps -= y * period_s * 1e12;
  d.random_walk_y += truncatedGaussian(state, noise.random_walk_fm * std::sqrt(3.0 * period_s));
  d.modulation_cycles += noise.pm_frequency_hz * period_s;
  d.modulation_cycles -= std::floor(d.modulation_cycles);
}

void SyntheticSource::mergeChannelsBefore(timestamp_t window_end) {
  // Each channel's finalised events form one sorted run; merge the runs pairwise.
  merge_input_.clear();
  std::vector<std::size_t> bounds{0};
  for (std::size_t i = 0; i < states_.size(); ++i) {
    auto& pending = states_[i].pending;
    const auto cut = std::lower_bound(pending.begin(), pending.end(), window_end);
    for (auto it = pending.begin(); it != cut; ++it) {
      if (*it >= config_.start_time_ps)
        merge_input_.push_back(makeTimeTag(config_.channels[i].channel, *it));
    }
    pending.erase(pending.begin(), cut);
    bounds.push_back(merge_input_.size());
  }
  while (bounds.size() > 2) {
    merge_output_.resize(merge_input_.size());
    std::vector<std::size_t> merged{0};
    for (std::size_t run = 0; run + 1 < bounds.size(); run += 2) {
      const auto begin = merge_input_.begin();
      const std::size_t left = bounds[run], middle = bounds[run + 1];
      const std::size_t right = run + 2 < bounds.size() ? bounds[run + 2] : middle;
      std::merge(
          begin + static_cast<std::ptrdiff_t>(left), begin + static_cast<std::ptrdiff_t>(middle),
          begin + static_cast<std::ptrdiff_t>(middle), begin + static_cast<std::ptrdiff_t>(right),
          merge_output_.begin() + static_cast<std::ptrdiff_t>(left), canonicalTagOrder);
      merged.push_back(right);
    }
    std::swap(merge_input_, merge_output_);
    bounds = std::move(merged);
  }
  ready_.insert(ready_.end(), merge_input_.begin(), merge_input_.end());
}

void SyntheticSource::generateWindow() {
  const timestamp_t window_begin = finalised_until_;
  const timestamp_t window_end = std::min(stream_end_, window_begin + window_ps_);
  // Generation runs one guard ahead so that no jittered or delayed event can still land
  // before `window_end` once the window is finalised.
  const timestamp_t generate_until = window_end + guard_ps_;
  for (std::size_t i = 0; i < config_.channels.size(); ++i) generateChannel(i, generate_until);

  const std::size_t first_new = ready_.size();
  mergeChannelsBefore(window_end);
  finalised_until_ = window_end;
  if (applyOverflows(first_new, window_begin, window_end)) {
    std::sort(ready_.begin() + static_cast<std::ptrdiff_t>(first_new), ready_.end(),
              canonicalTagOrder);
  }
}

bool SyntheticSource::applyOverflows(std::size_t first_new, timestamp_t window_begin,
                                     timestamp_t window_end) {
  bool changed = false;
  for (const auto& interval : config_.overflows) {
    if (interval.end_ps < window_begin || interval.begin_ps >= window_end) continue;
    changed = true;
    const timestamp_t drop_begin = std::max(interval.begin_ps, window_begin);
    const timestamp_t drop_end = std::min(interval.end_ps, window_end);
    auto& tags = ready_;
    std::size_t kept = first_new;
    for (std::size_t i = first_new; i < tags.size(); ++i) {
      const Tag& tag = tags[i];
      if (tag.type == TagType::TimeTag && tag.time >= drop_begin && tag.time < drop_end) {
        for (std::size_t c = 0; c < config_.channels.size(); ++c) {
          if (config_.channels[c].channel == tag.channel) ++missed_[c];
        }
      } else {
        tags[kept++] = tag;
      }
    }
    tags.resize(kept);
    if (interval.begin_ps >= window_begin && interval.begin_ps < window_end) {
      tags.push_back(Tag{TagType::OverflowBegin, 0, 0, 0, interval.begin_ps});
    }
    if (interval.end_ps >= window_begin && interval.end_ps < window_end) {
      for (std::size_t c = 0; c < config_.channels.size(); ++c) {
        while (missed_[c] > 0) {
          const auto chunk =
              static_cast<std::uint16_t>(std::min<std::uint64_t>(missed_[c], 0xFFFF));
          tags.push_back(
              Tag{TagType::MissedEvents, 0, chunk, config_.channels[c].channel, interval.end_ps});
          missed_[c] -= chunk;
        }
      }
      tags.push_back(Tag{TagType::OverflowEnd, 0, 0, 0, interval.end_ps});
    }
  }
  return changed;
}

bool SyntheticSource::next(BlockBuffer& out) {
  if (streamDone() && ready_position_ == ready_.size() && next_begin_ >= stream_end_) return false;
  const timestamp_t begin = next_begin_;
  const timestamp_t limit = begin > stream_end_ - config_.max_block_duration_ps
                                ? stream_end_
                                : begin + config_.max_block_duration_ps;
  while (!streamDone() && ready_.size() - ready_position_ <= config_.block_size &&
         finalised_until_ < limit) {
    generateWindow();
  }
  const timestamp_t time_limit = std::min(finalised_until_, limit);
  const auto first = ready_.begin() + static_cast<std::ptrdiff_t>(ready_position_);
  const auto available = static_cast<std::size_t>(
      std::lower_bound(first, ready_.end(), time_limit,
                       [](const Tag& tag, timestamp_t t) { return tag.time < t; }) -
      first);
  const std::span<const Tag> candidates(ready_.data() + ready_position_, available);
  const std::size_t count = blockSplitPoint(candidates, config_.block_size);
  const timestamp_t end = count < available ? candidates[count].time : time_limit;

  out.storage.assign(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(count));
  out.publishStorage();
  out.begin_time = begin;
  out.end_time = end;
  ready_position_ += count;
  next_begin_ = end;
  if (ready_position_ > (std::size_t{1} << 16) && ready_position_ * 2 > ready_.size()) {
    ready_.erase(ready_.begin(), ready_.begin() + static_cast<std::ptrdiff_t>(ready_position_));
    ready_position_ = 0;
  }
  return true;
}

}  // namespace tagflow
