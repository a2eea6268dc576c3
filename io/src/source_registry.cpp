#include "tagflow/io/source_registry.hpp"

#include "tagflow/core/error.hpp"
#include "tagflow/io/raw_file.hpp"
#include "tagflow/io/tag_file_source.hpp"
#include "tagflow/io/udp_stream_source.hpp"

namespace tagflow {

namespace {

constexpr std::int64_t kDefaultBlockSize = 16384;

std::size_t blockSize(const Parameters& p) {
  const std::int64_t size = p.getInt("block_size", kDefaultBlockSize);
  if (size < 1 || size > (std::int64_t{1} << 26)) {
    throw InvalidArgument("source key 'block_size' " + std::to_string(size) +
                          " is invalid (valid: 1..67108864)");
  }
  return static_cast<std::size_t>(size);
}

SyntheticChannel channelFrom(const Parameters& p, std::size_t index) {
  const std::string where = "source.channel #" + std::to_string(index);
  const std::string kind = p.getString("kind");
  const auto channel = static_cast<channel_t>(p.getInt("channel"));
  if (kind == "poisson") {
    p.requireOnly({"channel", "kind", "rate"}, where);
    return SyntheticChannel::poisson(channel, p.getDouble("rate"));
  }
  if (kind == "clock") {
    p.requireOnly({"channel", "kind", "frequency", "jitter_ps", "white_fm", "random_walk_fm",
                   "drift", "pm_index", "pm_frequency"},
                  where);
    ClockNoise noise;
    noise.white_fm = p.getDouble("white_fm", 0);
    noise.random_walk_fm = p.getDouble("random_walk_fm", 0);
    noise.drift_per_s = p.getDouble("drift", 0);
    noise.pm_index = p.getDouble("pm_index", 0);
    noise.pm_frequency_hz = p.getDouble("pm_frequency", 0);
    return SyntheticChannel::clock(channel, p.getDouble("frequency"), p.getDouble("jitter_ps", 0),
                                   noise);
  }
  if (kind == "partner") {
    p.requireOnly({"channel", "kind", "partner_of", "delay_ps", "jitter_ps", "probability"}, where);
    return SyntheticChannel::partner(channel, static_cast<channel_t>(p.getInt("partner_of")),
                                     p.getInt("delay_ps", 0), p.getDouble("jitter_ps", 0),
                                     p.getDouble("probability", 1));
  }
  throw InvalidArgument(where + ": kind '" + kind +
                        "' is unknown (valid: poisson, clock, partner)");
}

}  // namespace

std::vector<SyntheticChannel> demoChannels() {
  return {SyntheticChannel::poisson(1, 20e6),   SyntheticChannel::partner(2, 1, 1000, 50, 0.5),
          SyntheticChannel::clock(3, 10e6, 10), SyntheticChannel::poisson(4, 1e6),
          SyntheticChannel::poisson(5, 2e6),    SyntheticChannel::poisson(6, 4e6),
          SyntheticChannel::poisson(7, 8e6),    SyntheticChannel::poisson(8, 16e6)};
}

SyntheticConfig syntheticConfigFrom(const SourceSpec& spec) {
  const Parameters& p = spec.parameters;
  p.requireOnly(
      {"kind", "seed", "block_size", "max_block_duration_ps", "duration_ps", "start_time_ps"},
      "source 'synthetic'");
  SyntheticConfig config;
  config.seed = static_cast<std::uint64_t>(p.getInt("seed", 1));
  config.block_size = blockSize(p);
  config.max_block_duration_ps = p.getInt("max_block_duration_ps", config.max_block_duration_ps);
  config.duration_ps = p.getInt("duration_ps", -1);
  config.start_time_ps = p.getInt("start_time_ps", 0);
  for (const auto& [name, tables] : spec.tables) {
    if (name != "channel" && name != "overflow") {
      throw InvalidArgument("unknown table 'source." + name +
                            "' for source 'synthetic' (valid: channel, overflow)");
    }
  }
  if (auto it = spec.tables.find("channel"); it != spec.tables.end()) {
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      config.channels.push_back(channelFrom(it->second[i], i));
    }
  } else {
    config.channels = demoChannels();
  }
  if (auto it = spec.tables.find("overflow"); it != spec.tables.end()) {
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const Parameters& o = it->second[i];
      o.requireOnly({"begin_ps", "end_ps"}, "source.overflow #" + std::to_string(i));
      config.overflows.push_back(OverflowInterval{o.getInt("begin_ps"), o.getInt("end_ps")});
    }
  }
  config.validate();
  return config;
}

const std::vector<SourceKindHelp>& sourceKinds() {
  static const std::vector<SourceKindHelp> kinds = {
      {"synthetic",
       "deterministic generated stream (default: 8 demo channels, 71 MTags/s of stream time)",
       {{"seed", "random seed, default 1"},
        {"block_size", "most tags per block, default 16384"},
        {"max_block_duration_ps", "most stream time per block, default 2e10 (20 ms)"},
        {"duration_ps", "stream length, default endless"},
        {"start_time_ps", "time of the stream start, default 0"},
        {"[[source.channel]]",
         "channel, kind = poisson (rate) | clock (frequency, jitter_ps, white_fm, random_walk_fm, "
         "drift, pm_index, pm_frequency) | "
         "partner (partner_of, delay_ps, jitter_ps, probability)"},
        {"[[source.overflow]]", "begin_ps, end_ps: an injected overflow interval"}}},
      {"raw",
       "16-byte tag records from a file, no header",
       {{"path", "file to read"}, {"block_size", "most tags per block, default 16384"}}},
      {"tagfile",
       "a recording (FileWriter, tagflow convert) replayed; a first part reads the whole set",
       {{"path", "tag file to read"},
        {"block_size", "most tags per block, default 32768 (whole recorded blocks)"},
        {"speed", "replay speed: negative as fast as possible (default), 1.0 real time, >= 0.1"}}},
      {"udp",
       "a stream received over UDP in the tagflow wire format (tagflow stream send, hardware)",
       {{"address", "local IPv4 address to receive on, default 0.0.0.0 (all)"},
        {"port", "UDP port, default 4750"},
        {"block_size", "tags per block, default 16384"},
        {"receive_buffer", "socket receive buffer in bytes, default 67108864"},
        {"ring_datagrams", "datagrams between receiving and decoding, default 4096"},
        {"receive_cpu", "pin the receiving thread to this CPU, default -1 (any)"},
        {"reorder_window", "datagrams held to put reordered ones back, 0..64, default 8"},
        {"idle_timeout_s", "end after this long without data, default 0 (wait for the end)"}}},
  };
  return kinds;
}

std::unique_ptr<Source> makeSource(const SourceSpec& spec) {
  if (spec.kind == "synthetic") return std::make_unique<SyntheticSource>(syntheticConfigFrom(spec));
  if (spec.kind == "raw") {
    spec.parameters.requireOnly({"kind", "path", "block_size"}, "source 'raw'");
    if (!spec.tables.empty()) {
      throw InvalidArgument("source 'raw' takes no table 'source." + spec.tables.begin()->first +
                            "'");
    }
    return std::make_unique<RawFileSource>(spec.parameters.getString("path"),
                                           blockSize(spec.parameters));
  }
  if (spec.kind == "tagfile") {
    spec.parameters.requireOnly({"kind", "path", "block_size", "speed"}, "source 'tagfile'");
    if (!spec.tables.empty()) {
      throw InvalidArgument("source 'tagfile' takes no table 'source." +
                            spec.tables.begin()->first + "'");
    }
    return std::make_unique<FileReader>(spec.parameters.getString("path"),
                                        spec.parameters.contains("block_size")
                                            ? blockSize(spec.parameters)
                                            : kDefaultReplayBlockSize,
                                        spec.parameters.getDouble("speed", -1));
  }
  if (spec.kind == "udp") {
    if (!spec.tables.empty()) {
      throw InvalidArgument("source 'udp' takes no table 'source." + spec.tables.begin()->first +
                            "'");
    }
    return std::make_unique<UdpStreamSource>(udpSourceConfigFrom(spec.parameters));
  }
  throw InvalidArgument("unknown source kind '" + spec.kind +
                        "' (valid: synthetic, raw, tagfile, udp)");
}

Parameters sourceStatistics(const Source& source) {
  if (const auto* udp = dynamic_cast<const UdpStreamSource*>(&source)) {
    return udp->stats().toParameters();
  }
  return {};
}

}  // namespace tagflow
