#include "tagflow/io/sources/synthetic_source.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <sstream>

#include "sources/bulk_draws.hpp"
#include "sources/poisson_superposition.hpp"
#include "sources/random_draws.hpp"
#include "sources/sorted_runs.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

using synthetic::roundToPs;

namespace {

constexpr double kExpectedTagsPerWindow = 8192;
// Rates and frequencies: below 1 mHz the gaps and periods in ps leave the range of
// timestamp_t arithmetic; above 1e10 Hz a stream is no longer a plausible detector's.
constexpr double kMinRate = 1e-3;
constexpr double kMaxRate = 1e10;
// An endless stream ends at the stream time limit, as the vendor readers' streams do.
constexpr timestamp_t kTimeLimit = kStreamTimeLimit;
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
    guard += static_cast<timestamp_t>(std::ceil(synthetic::kNormalTruncation * c.jitter_ps));
  }
  return guard;
}

std::string channelWhere(std::size_t index, const SyntheticChannel& channel) {
  return "synthetic channel #" + std::to_string(index) + " (channel " +
         std::to_string(channel.channel) + ")";
}

double truncatedGaussian(synthetic::RandomStream::Reader& draws, double sigma) {
  return sigma > 0 ? sigma * draws.truncatedNormal() : 0.0;
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
        // Not std::abs: it overflows at the lowest int64.
        if (c.delay_ps < -1'000'000'000'000 || c.delay_ps > 1'000'000'000'000) {
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

// The stream, window by window. The Poisson channels are drawn together, as one superposed
// process whose events arrive sorted and already carry their channel; every clock and
// partner keeps its own queue of times. A window is the merge of the Poisson events and the
// queues' events before its end.
class SyntheticSource::Generator {
 public:
  explicit Generator(SyntheticConfig config);

  bool next(BlockBuffer& out);

 private:
  // The smooth part of a noisy clock's time deviation, for the edge about to be generated.
  struct ClockDeviation {
    double frequency_noise_ps = 0;  // integrated white and random-walk frequency noise
    double random_walk_y = 0;       // current fractional frequency of the random walk
    double modulation_cycles = 0;   // phase of the modulation at the edge, in [0, 1)
  };

  struct ChannelState {
    std::optional<synthetic::RandomStream> random;  // clocks and partners: their own stream
    bool has_partners = false;
    synthetic::TimeRun generated;  // this round's events (a partner reads its parent's)
    synthetic::TimeRun pending;    // clocks, partners: not yet finalised, sorted
    // Clock
    std::int64_t next_edge = 0;
    timestamp_t period_whole = 0;
    double period_fraction = 0;
    ClockDeviation deviation;
    // Partner
    std::size_t parent = 0;        // index of the channel it echoes
    std::uint64_t echo_below = 0;  // a word below it echoes; unused at probability 1
  };

  bool streamDone() const { return finalised_until_ >= stream_end_; }
  // The storage of a block taken whole from ready_: its tags, then the run's slack.
  std::size_t blockStorage() const { return config_.block_size + 2 * synthetic::TagRun::kSlack; }
  void generateWindow();
  void collectPoissonEvents(std::size_t index, std::span<const Tag> drawn);
  void generateClock(std::size_t index, timestamp_t until);
  void generatePartner(std::size_t index);
  // Deviation of edge `state.next_edge` from its ideal time, in ps, without its white jitter.
  double clockDeviationPs(const SyntheticChannel& channel, const ChannelState& state,
                          timestamp_t since_start) const;
  // Draws the frequency noise of the period after the current edge.
  void advanceClockDeviation(const SyntheticChannel& channel, ChannelState& state,
                             synthetic::RandomStream::Reader& draws);
  void mergeRunsBefore(timestamp_t window_end);
  // Drops tags inside overflow intervals and adds the overflow marks; true if it did anything
  // (the window then needs sorting again).
  bool applyOverflows(std::size_t first_new, timestamp_t window_begin, timestamp_t window_end);

  SyntheticConfig config_;
  std::optional<synthetic::PoissonSuperposition> poisson_;  // absent without Poisson channels
  synthetic::TagRun poisson_pending_;                       // drawn, not yet finalised, sorted
  std::vector<ChannelState> states_;
  timestamp_t window_ps_ = 0;
  std::size_t window_tags_bound_ = 0;
  timestamp_t guard_ps_ = 0;
  timestamp_t stream_end_ = 0;       // meaningful when duration_ps > 0
  timestamp_t finalised_until_ = 0;  // ready_ holds every tag before this time
  timestamp_t next_begin_ = 0;
  synthetic::TagRun channel_tags_;  // scratch of the window merge
  synthetic::TagRun derived_;       // the window's clock and partner events, merged
  synthetic::TagRun derived_scratch_;
  synthetic::SparseMerge merge_;
  synthetic::TagRun ready_;            // finalised, sorted
  std::size_t ready_position_ = 0;     // ready_[0, ready_position_) is sent
  bool ready_cut_ = false;             // a block ended inside ready_
  std::vector<std::uint64_t> missed_;  // per configured channel, inside the open overflow
};

SyntheticSource::SyntheticSource(SyntheticConfig config) : config_(std::move(config)) {
  config_.validate();
  generator_ = std::make_unique<Generator>(config_);
}

SyntheticSource::~SyntheticSource() = default;

bool SyntheticSource::next(BlockBuffer& out) {
  return generator_->next(out);
}

SyntheticSource::Generator::Generator(SyntheticConfig config) : config_(std::move(config)) {
  const double window = kExpectedTagsPerWindow / config_.totalRateHz() * 1e12;
  window_ps_ = static_cast<timestamp_t>(std::clamp(window, 1e3, 1e12));
  // The tags a window may hold: the expected count and 6 of its standard deviations, so that
  // a block planned around it is rarely cut inside it.
  const double expected = config_.totalRateHz() * static_cast<double>(window_ps_) * 1e-12;
  window_tags_bound_ = static_cast<std::size_t>(std::ceil(expected + 6 * std::sqrt(expected)));
  guard_ps_ = guardPs(config_.channels);
  // Every random stream takes its lanes' seeds from one splitmix64 sequence, in channel
  // order, the Poisson channels' shared stream last.
  synthetic::SplitMix64 seeder(config_.seed);
  std::vector<synthetic::PoissonSuperposition::Channel> poisson_channels;
  states_.resize(config_.channels.size());
  for (std::size_t i = 0; i < config_.channels.size(); ++i) {
    const auto& c = config_.channels[i];
    auto& state = states_[i];
    if (c.kind == SyntheticChannel::Kind::Poisson) {
      poisson_channels.push_back({c.channel, c.rate_hz});
      continue;
    }
    state.random.emplace(seeder);
    if (c.kind == SyntheticChannel::Kind::Clock) {
      const double period = 1e12 / c.frequency_hz;
      state.period_whole = static_cast<timestamp_t>(std::floor(period));
      state.period_fraction = period - std::floor(period);
    } else {
      for (std::size_t j = 0; j < i; ++j) {
        if (config_.channels[j].channel == c.partner_of) state.parent = j;
      }
      states_[state.parent].has_partners = true;
      // Below 1, probability * 2^64 is below 2^64; at 1 every event echoes without a draw.
      if (c.probability < 1)
        state.echo_below = static_cast<std::uint64_t>(c.probability * 0x1.0p64);
    }
  }
  if (!poisson_channels.empty()) {
    poisson_.emplace(poisson_channels, config_.start_time_ps, seeder);
  }
  stream_end_ = config_.duration_ps > 0 ? config_.start_time_ps + config_.duration_ps : kTimeLimit;
  finalised_until_ = config_.start_time_ps;
  next_begin_ = config_.start_time_ps;
  missed_.assign(config_.channels.size(), 0);
  ready_.reserve(blockStorage());
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

void SyntheticSource::Generator::collectPoissonEvents(std::size_t index,
                                                      std::span<const Tag> drawn) {
  auto& generated = states_[index].generated;
  generated.clear();
  static_assert(synthetic::TimeRun::kSlack >= 4);
  generated.grow(synthetic::timesOnChannel(drawn, config_.channels[index].channel,
                                           generated.room(drawn.size())));
}

void SyntheticSource::Generator::generateClock(std::size_t index, timestamp_t until) {
  const auto& c = config_.channels[index];
  auto& state = states_[index];
  synthetic::RandomStream::Reader draws(*state.random);
  state.generated.clear();
  if (!c.noise.any()) {
    // Edge k at k periods (the fraction rounded per edge, so that it never drifts) plus its
    // white jitter.
    const auto idealEdge = [&](std::int64_t k) {
      return config_.start_time_ps + k * state.period_whole +
             roundToPs(static_cast<double>(k) * state.period_fraction);
    };
    std::int64_t edge = state.next_edge;
    // Room for every edge before `until`, and one more (the span is a window and a guard).
    const double period = static_cast<double>(state.period_whole) + state.period_fraction;
    const double span = static_cast<double>(until - idealEdge(edge));
    timestamp_t* const edges =
        state.generated.room(static_cast<std::size_t>(std::max(span / period + 2, 0.0)));
    std::size_t count = 0;
    for (timestamp_t ideal = idealEdge(edge); ideal < until; ideal = idealEdge(++edge)) {
      edges[count++] = ideal;
    }
    synthetic::addRoundedNormals(draws, c.jitter_ps, 0, {edges, count});
    state.generated.grow(count);
    state.next_edge = edge;
    return;
  }
  for (;;) {
    const timestamp_t since_start =
        state.next_edge * state.period_whole +
        roundToPs(static_cast<double>(state.next_edge) * state.period_fraction);
    const timestamp_t ideal = config_.start_time_ps + since_start;
    const double deviation = clockDeviationPs(c, state, since_start);
    // The white jitter stays within the guard; the smooth deviation decides the window.
    if (static_cast<double>(ideal) + deviation >= static_cast<double>(until)) break;
    state.generated.push_back(ideal + roundToPs(deviation + truncatedGaussian(draws, c.jitter_ps)));
    advanceClockDeviation(c, state, draws);
    ++state.next_edge;
  }
}

void SyntheticSource::Generator::generatePartner(std::size_t index) {
  const auto& c = config_.channels[index];
  auto& state = states_[index];
  synthetic::RandomStream::Reader draws(*state.random);
  const auto parent_events = states_[state.parent].generated.items();
  state.generated.clear();
  // Which parent events echo, a word each, compared without a branch (the outcome is random),
  // then the echoes' delays and jitter.
  timestamp_t* const echoes = state.generated.room(parent_events.size());
  std::size_t count = parent_events.size();
  if (c.probability >= 1) {
    std::copy(parent_events.begin(), parent_events.end(), echoes);
  } else {
    count = synthetic::keepWithWordBelow(draws, state.echo_below, parent_events, echoes);
  }
  synthetic::addRoundedNormals(draws, c.jitter_ps, c.delay_ps, {echoes, count});
  state.generated.grow(count);
}

double SyntheticSource::Generator::clockDeviationPs(const SyntheticChannel& channel,
                                                    const ChannelState& state,
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

void SyntheticSource::Generator::advanceClockDeviation(const SyntheticChannel& channel,
                                                       ChannelState& state,
                                                       synthetic::RandomStream::Reader& draws) {
  const ClockNoise& noise = channel.noise;
  const double period_s = 1.0 / channel.frequency_hz;
  ClockDeviation& d = state.deviation;
  // White FM: sigma_y(tau) = sigma sqrt(T / tau) for a per-period sigma; random-walk FM with a
  // per-period step q has sigma_y^2(tau) -> q^2 tau / (3 T).
  const double y = d.random_walk_y + truncatedGaussian(draws, noise.white_fm / std::sqrt(period_s));
  d.frequency_noise_ps -= y * period_s * 1e12;
  d.random_walk_y += truncatedGaussian(draws, noise.random_walk_fm * std::sqrt(3.0 * period_s));
  d.modulation_cycles += noise.pm_frequency_hz * period_s;
  d.modulation_cycles -= std::floor(d.modulation_cycles);
}

void SyntheticSource::Generator::mergeRunsBefore(timestamp_t window_end) {
  const auto before_end = [](const Tag& tag, timestamp_t t) { return tag.time < t; };
  // The clock and partner events of the window, merged into one run.
  derived_.clear();
  for (std::size_t i = 0; i < states_.size(); ++i) {
    if (config_.channels[i].kind == SyntheticChannel::Kind::Poisson) continue;
    auto& pending = states_[i].pending;
    const std::span<const timestamp_t> queued = pending.items();
    const auto cut = std::lower_bound(queued.begin(), queued.end(), window_end);
    // Jitter and negative delays can put events before the stream's start.
    const auto first = std::lower_bound(queued.begin(), cut, config_.start_time_ps);
    const auto count = static_cast<std::size_t>(cut - first);
    const channel_t channel = config_.channels[i].channel;
    channel_tags_.clear();
    Tag* const tags = channel_tags_.room(count);
    for (std::size_t k = 0; k < count; ++k) tags[k] = makeTimeTag(channel, first[k]);
    channel_tags_.grow(count);
    pending.eraseFront(static_cast<std::size_t>(cut - queued.begin()));
    derived_scratch_.clear();
    merge_.append(derived_, derived_.size(), channel_tags_, channel_tags_.size(), derived_scratch_);
    std::swap(derived_, derived_scratch_);
  }
  // With the Poisson events of the window.
  const std::span<const Tag> poisson = poisson_pending_.items();
  const auto poisson_count = static_cast<std::size_t>(
      std::lower_bound(poisson.begin(), poisson.end(), window_end, before_end) - poisson.begin());
  merge_.append(poisson_pending_, poisson_count, derived_, derived_.size(), ready_);
  poisson_pending_.eraseFront(poisson_count);
}

void SyntheticSource::Generator::generateWindow() {
  const timestamp_t window_begin = finalised_until_;
  // The windows do not depend on the stream's length (the random words go to the same events
  // whatever it is): the last one is generated whole and cut at the end, so that a stream is
  // the beginning of any longer one with the same seed.
  const timestamp_t window_end = window_begin + window_ps_;
  // Generation runs one guard ahead so that no jittered or delayed event can still land
  // before `window_end` once the window is finalised.
  const timestamp_t generate_until = window_end + guard_ps_;
  const std::size_t first_drawn = poisson_pending_.size();
  if (poisson_) poisson_->appendBefore(generate_until, poisson_pending_);
  const std::span<const Tag> drawn = poisson_pending_.items().subspan(first_drawn);
  // In channel order: a partner's parent is listed, and so generated, before it.
  for (std::size_t i = 0; i < config_.channels.size(); ++i) {
    auto& state = states_[i];
    switch (config_.channels[i].kind) {
      case SyntheticChannel::Kind::Poisson:
        if (state.has_partners) collectPoissonEvents(i, drawn);
        continue;
      case SyntheticChannel::Kind::Clock:
        generateClock(i, generate_until);
        break;
      case SyntheticChannel::Kind::Partner:
        generatePartner(i);
        break;
    }
    // Jitter can reorder a channel's own events slightly; keep each queue sorted.
    const std::size_t old_size = state.pending.size();
    std::copy_n(state.generated.data(), state.generated.size(),
                state.pending.room(state.generated.size()));
    state.pending.grow(state.generated.size());
    synthetic::restoreOrder(state.pending, old_size);
  }

  const std::size_t first_new = ready_.size();
  mergeRunsBefore(window_end);
  const timestamp_t finalised = std::min(window_end, stream_end_);
  if (finalised < window_end) {
    const std::span<const Tag> window = ready_.items().subspan(first_new);
    const auto kept = std::lower_bound(window.begin(), window.end(), finalised,
                                       [](const Tag& tag, timestamp_t t) { return tag.time < t; });
    ready_.truncate(first_new + static_cast<std::size_t>(kept - window.begin()));
  }
  finalised_until_ = finalised;
  if (applyOverflows(first_new, window_begin, finalised)) {
    std::sort(ready_.data() + first_new, ready_.data() + ready_.size(), canonicalTagOrder);
  }
}

bool SyntheticSource::Generator::applyOverflows(std::size_t first_new, timestamp_t window_begin,
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
      const Tag& tag = tags.data()[i];
      if (tag.type == TagType::TimeTag && tag.time >= drop_begin && tag.time < drop_end) {
        for (std::size_t c = 0; c < config_.channels.size(); ++c) {
          if (config_.channels[c].channel == tag.channel) ++missed_[c];
        }
      } else {
        tags.data()[kept++] = tag;
      }
    }
    tags.truncate(kept);
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

bool SyntheticSource::Generator::next(BlockBuffer& out) {
  if (streamDone() && ready_position_ == ready_.size() && next_begin_ >= stream_end_) return false;
  const timestamp_t begin = next_begin_;
  const timestamp_t limit = begin > stream_end_ - config_.max_block_duration_ps
                                ? stream_end_
                                : begin + config_.max_block_duration_ps;
  for (;;) {
    if (streamDone() || finalised_until_ >= limit) break;
    const std::size_t unsent = ready_.size() - ready_position_;
    // Enough for a full block. Or the run holds whole windows (no block was cut from it) and
    // the next window might not fit into this block with them: the block takes them in one
    // piece, handed over without a copy below, where a full block would be cut inside the
    // next window and its rest copied later.
    if (unsent > config_.block_size ||
        (!ready_cut_ && unsent > 0 && unsent + window_tags_bound_ > config_.block_size)) {
      break;
    }
    generateWindow();
  }
  const timestamp_t time_limit = std::min(finalised_until_, limit);
  const std::span<const Tag> unsent = ready_.items().subspan(ready_position_);
  const auto available = static_cast<std::size_t>(
      std::lower_bound(unsent.begin(), unsent.end(), time_limit,
                       [](const Tag& tag, timestamp_t t) { return tag.time < t; }) -
      unsent.begin());
  const std::span<const Tag> candidates = unsent.first(available);
  const std::size_t count = blockSplitPoint(candidates, config_.block_size);
  const timestamp_t end = count < available ? candidates[count].time : time_limit;

  // The block's tags are the first `count` of its storage, which keeps its size: a vector
  // that only grows is initialised once. The block takes the run's storage when it takes the
  // whole run, unless that storage grew past a block's (the pool sized its buffers for one).
  const std::size_t storage_limit = std::max(out.storage.capacity(), blockStorage());
  if (ready_position_ == 0 && count == ready_.size() && ready_.capacity() <= storage_limit) {
    ready_.handOver(out.storage);
    ready_cut_ = false;
  } else {
    if (out.storage.size() < count) out.storage.resize(count);
    std::copy(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(count),
              out.storage.begin());
    ready_position_ += count;
    ready_cut_ = ready_position_ < ready_.size();
    if (!ready_cut_) {
      // All sent: a run grown past the block's storage starts afresh, so that it can be
      // handed over again.
      if (ready_.capacity() > storage_limit) {
        ready_.release();
        ready_.reserve(blockStorage());
      } else {
        ready_.clear();
      }
      ready_position_ = 0;
    } else if (ready_position_ >= ready_.size() - ready_position_) {
      // Sent at least as much as is left: moving the rest to the front costs no more than
      // sending it did.
      ready_.eraseFront(ready_position_);
      ready_position_ = 0;
    }
  }
  out.tags = std::span<const Tag>(out.storage.data(), count);
  // Only overflow intervals add tags other than TimeTags.
  if (config_.overflows.empty()) {
    out.special.clear();
  } else {
    out.indexSpecialTags();
  }
  out.begin_time = begin;
  out.end_time = end;
  next_begin_ = end;
  return true;
}

}  // namespace tagflow
