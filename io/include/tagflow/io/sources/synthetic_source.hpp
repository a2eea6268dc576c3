// SyntheticSource: a deterministic stream for a given seed and configuration, independent of
// the block size; a stream of some duration is the beginning of the same stream run longer. Each channel is a Poisson process (rate), a periodic clock (frequency,
// Gaussian jitter = white phase noise, and optionally the clock noise models of ClockNoise)
// or the partner of an earlier channel (each of its events is echoed with a probability,
// after a delay, with Gaussian jitter). Overflow intervals can be injected:
// inside [begin, end) tags are dropped and reported as MissedEvents counts at `end`,
// bracketed by OverflowBegin/OverflowEnd tags (channel 0).
//
// Events are generated in fixed windows of stream time; Gaussian jitter is truncated at
// 6 sigma, which lets a window be finalised once generation has run one guard interval
// (delays plus 6 sigma) ahead of it. Blocks hold at most `block_size` tags and span at most
// `max_block_duration_ps` of stream time, so quiet stretches yield empty blocks.
//
// Stream version 3 (the same seed gives a different stream than versions 1 and 2 did): all
// Poisson channels are drawn as one Poisson process of their total rate whose events are given
// channels in proportion to the rates (the same joint distribution as independent channels;
// the first event lies one exponential gap after the start; gaps are rounded to whole
// picoseconds and at least 1 ps, so no two Poisson events share a time), with ziggurat
// exponential and normal variates from xoshiro256++ words in eight interleaved lanes (io/src/
// sources/random_draws.hpp; version 2 had four); clocks and partners are merged into that
// sorted stream (io/src/sources/sorted_runs.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tagflow/core/source.hpp"

namespace tagflow {

// Noise of a clock beyond its white phase noise (jitter_ps). Edge k of a clock of period T lies
// at k*T + x(k*T) + jitter, and the time deviation x sums:
// - white frequency noise, Allan deviation `white_fm` at tau = 1 s (sigma_y = white_fm /
//   sqrt(tau / 1 s)): every period gets an independent fractional frequency error;
// - random-walk frequency noise, Allan deviation `random_walk_fm` at 1 s (sigma_y =
//   random_walk_fm * sqrt(tau / 1 s) for tau much longer than a period);
// - a linear frequency drift: f(t) = f0 (1 + drift_per_s * t), so ADEV = |drift| tau / sqrt(2);
// - sinusoidal phase modulation phi(t) = pm_index * sin(2 pi pm_frequency_hz t), in radians of
//   the carrier, which puts spurs of 20 log10(pm_index / 2) dBc at +-pm_frequency_hz.
// A faster clock (y > 0) has shorter periods: x falls by T*y per period.
struct ClockNoise {
  double white_fm = 0;
  double random_walk_fm = 0;
  double drift_per_s = 0;
  double pm_index = 0;
  double pm_frequency_hz = 0;

  bool any() const;
};

struct SyntheticChannel {
  enum class Kind { Poisson, Clock, Partner };
  Kind kind = Kind::Poisson;
  channel_t channel = 1;
  double rate_hz = 0;        // Poisson
  double frequency_hz = 0;   // Clock
  double jitter_ps = 0;      // Clock, Partner: Gaussian sigma
  channel_t partner_of = 0;  // Partner
  timestamp_t delay_ps = 0;  // Partner
  double probability = 1;    // Partner
  ClockNoise noise;          // Clock

  static SyntheticChannel poisson(channel_t channel, double rate_hz);
  static SyntheticChannel clock(channel_t channel, double frequency_hz, double jitter_ps = 0,
                                ClockNoise noise = {});
  static SyntheticChannel partner(channel_t channel, channel_t partner_of, timestamp_t delay_ps,
                                  double jitter_ps = 0, double probability = 1);
};

struct OverflowInterval {
  timestamp_t begin_ps = 0;
  timestamp_t end_ps = 0;
};

struct SyntheticConfig {
  std::vector<SyntheticChannel> channels;
  std::vector<OverflowInterval> overflows;  // sorted, non-overlapping
  std::uint64_t seed = 1;
  std::size_t block_size = 16384;
  timestamp_t max_block_duration_ps = 20'000'000'000;  // 20 ms, as the reference default
  timestamp_t duration_ps = -1;                        // stream length; -1: endless
  timestamp_t start_time_ps = 0;

  // Throws InvalidArgument naming the first bad value and its valid range.
  void validate() const;
  double totalRateHz() const;
};

class SyntheticSource : public Source {
 public:
  explicit SyntheticSource(SyntheticConfig config);
  ~SyntheticSource() override;

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return config_.block_size; }
  std::vector<channel_t> channels() const override {
    std::vector<channel_t> channels;
    for (const auto& channel : config_.channels) channels.push_back(channel.channel);
    return channels;
  }
  std::string describe() const override;

  const SyntheticConfig& config() const { return config_; }

 private:
  class Generator;  // the windows, channel states and random streams (synthetic_source.cpp)

  SyntheticConfig config_;
  std::unique_ptr<Generator> generator_;
};

}  // namespace tagflow
