#include "tagflow/io/source_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <variant>

#include "tagflow/core/error.hpp"
#include "tagflow/core/kind_registry.hpp"
#include "tagflow/io/hdf5/photon_hdf5.hpp"
#include "tagflow/io/sources/input_delay_source.hpp"
#include "tagflow/io/sources/merged_source.hpp"
#include "tagflow/io/sources/paced_source.hpp"
#include "tagflow/io/sources/raw_file.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/format.hpp"
#include "tagflow/io/udp/stream_source.hpp"
#include "tagflow/io/vendor/vendor_formats.hpp"

namespace tagflow {

namespace {

constexpr std::int64_t kDefaultBlockSize = 16384;

ParameterSpec blockSizeKey(std::int64_t fallback) {
  return ParameterSpec::integer("block_size")
      .atLeast(1)
      .atMost(1 << 26)
      .byDefault(fallback)
      .help("most tags per block");
}

const ParameterSchema& syntheticSchema() {
  static const ParameterSchema schema(
      "synthetic",
      "deterministic generated stream (default: 8 demo channels, 71 MTags/s of stream time); "
      "[[source.channel]] and [[source.overflow]] tables below",
      {ParameterSpec::integer("seed").atLeast(0).byDefault(std::int64_t{1}).help("random seed"),
       blockSizeKey(kDefaultBlockSize),
       ParameterSpec::integer("max_block_duration_ps")
           .unit("ps")
           .atLeast(1)
           .atMost(0x1p62)
           .byDefault(SyntheticConfig{}.max_block_duration_ps)
           .help("most stream time per block"),
       ParameterSpec::integer("duration_ps")
           .unit("ps")
           .atLeast(-1)
           .byDefault(std::int64_t{-1})
           .help("stream length (-1: endless)"),
       ParameterSpec::integer("start_time_ps")
           .unit("ps")
           .atLeast(-0x1p62)  // +-2^62 ps: stream times stay within it (SyntheticConfig)
           .atMost(0x1p62)
           .byDefault(std::int64_t{0})
           .help("time of the stream start"),
       ParameterSpec::real("speed").byDefault(-1.0).help(
           "pace: negative as fast as possible, 1.0 real time (0.001 to 1e6), for live views")});
  return schema;
}

ParameterSpec channelKey() {
  return ParameterSpec::channel("channel").help("the channel number");
}

ParameterSpec channelKindKey(std::string kind) {
  return ParameterSpec::text("kind").oneOf({std::move(kind)}).help("the channel's kind");
}

const ParameterSchema& poissonSchema() {
  static const ParameterSchema schema(
      "poisson", "[[source.channel]] kind = \"poisson\": events at random times",
      {channelKey(), channelKindKey("poisson"),
       ParameterSpec::real("rate").unit("Hz").atLeast(1e-3).atMost(1e10).help("mean event rate")});
  return schema;
}

const ParameterSchema& clockSchema() {
  static const ParameterSchema schema(
      "clock", "[[source.channel]] kind = \"clock\": a periodic signal with phase noise",
      {channelKey(), channelKindKey("clock"),
       ParameterSpec::real("frequency")
           .unit("Hz")
           .atLeast(1e-3)
           .atMost(1e10)
           .help("clock frequency"),
       ParameterSpec::real("jitter_ps")
           .unit("ps")
           .atLeast(0)
           .byDefault(0.0)
           .help("white phase noise, rms"),
       ParameterSpec::real("white_fm")
           .byDefault(0.0)
           .help("white frequency noise: Allan deviation at 1 s"),
       ParameterSpec::real("random_walk_fm")
           .byDefault(0.0)
           .help("random-walk frequency noise per sqrt(s)"),
       ParameterSpec::real("drift").unit("1/s").byDefault(0.0).help(
           "linear fractional frequency drift"),
       ParameterSpec::real("pm_index")
           .unit("rad")
           .byDefault(0.0)
           .help("sinusoidal phase modulation, peak"),
       ParameterSpec::real("pm_frequency")
           .unit("Hz")
           .byDefault(0.0)
           .help("sinusoidal phase modulation frequency")});
  return schema;
}

const ParameterSchema& partnerSchema() {
  static const ParameterSchema schema(
      "partner", "[[source.channel]] kind = \"partner\": a delayed, jittered copy of a channel",
      {channelKey(), channelKindKey("partner"),
       ParameterSpec::channel("partner_of").help("the channel copied"),
       ParameterSpec::integer("delay_ps").unit("ps").byDefault(std::int64_t{0}).help("delay"),
       ParameterSpec::real("jitter_ps")
           .unit("ps")
           .atLeast(0)
           .byDefault(0.0)
           .help("Gaussian jitter, rms"),
       ParameterSpec::real("probability")
           .atLeast(0)
           .atMost(1)
           .byDefault(1.0)
           .help("probability that an event has its partner")});
  return schema;
}

const ParameterSchema& overflowSchema() {
  static const ParameterSchema schema(
      "overflow", "[[source.overflow]]: an injected overflow interval",
      {ParameterSpec::integer("begin_ps").unit("ps").help("start of the interval"),
       ParameterSpec::integer("end_ps").unit("ps").help("end of the interval")});
  return schema;
}

const ParameterSchema& rawSchema() {
  static const ParameterSchema schema(
      "raw", "16-byte tag records from a file, no header",
      {ParameterSpec::text("path").help("file to read"), blockSizeKey(kDefaultBlockSize)});
  return schema;
}

const ParameterSchema& photonHdf5Schema() {
  static const ParameterSchema schema(
      "photon_hdf5", "a Photon-HDF5 file (T2, or T3 with its nanotimes and a sync channel)",
      {ParameterSpec::text("path").help("file to read"), blockSizeKey(kDefaultBlockSize)});
  return schema;
}

const ParameterSchema& tagfileSchema() {
  static const ParameterSchema schema(
      "tagfile",
      "a recording (FileWriter, tagflow convert) replayed; a first part reads the whole set",
      {ParameterSpec::text("path").help("tag file to read"),
       blockSizeKey(static_cast<std::int64_t>(kDefaultReplayBlockSize))
           .help("most tags per block (the default keeps whole recorded blocks)"),
       ParameterSpec::real("speed").byDefault(-1.0).help(
           "replay speed: negative as fast as possible, 1.0 real time, >= 0.1")});
  return schema;
}

const ParameterSchema& mergedSchema() {
  static const ParameterSchema schema(
      "merged",
      "several sources as one stream, such as the recordings of several time taggers: each "
      "[[source.input]] table below is a source, shifted in channels and time; the stream spans "
      "the union of theirs, overflow intervals united",
      {ParameterSpec::boolean("overlap_only")
           .byDefault(false)
           .help("keep only the span every input covers"),
       blockSizeKey(static_cast<std::int64_t>(kDefaultMergedBlockSize))
           .atMost(tagfile::kMaxBlockTags)});
  return schema;
}

constexpr std::int64_t kLargestChannelOffset = (std::int64_t{1} << 27) - 1;

const ParameterSchema& mergedInputSchema() {
  static const ParameterSchema schema(
      "input",
      "[[source.input]]: one input of a merged source: `kind` and that kind's keys, and these",
      {ParameterSpec::integer("channel_offset")
           .atLeast(static_cast<double>(-kLargestChannelOffset))
           .atMost(static_cast<double>(kLargestChannelOffset))
           .byDefault(std::int64_t{0})
           .help("added to its channels (falling edges: subtracted)"),
       ParameterSpec::integer("time_offset_ps")
           .unit("ps")
           .atLeast(-0x1p62)
           .atMost(0x1p62)
           .byDefault(std::int64_t{0})
           .help("added to its times")});
  return schema;
}

// The settings without `kind`, which chose the schema.
Parameters withoutKind(const Parameters& parameters) {
  Parameters rest;
  for (const auto& [key, value] : parameters.entries()) {
    if (key != "kind") rest.set(key, value);
  }
  return rest;
}

SyntheticChannel channelFrom(const Parameters& given, std::size_t index) {
  const std::string where = "source.channel #" + std::to_string(index);
  const std::string kind = given.contains("kind") ? given.getString("kind") : "";
  if (kind == "poisson") {
    const Parameters p = poissonSchema().validate(given, where);
    return SyntheticChannel::poisson(channelArgument(p, "channel"), p.getDouble("rate"));
  }
  if (kind == "clock") {
    const Parameters p = clockSchema().validate(given, where);
    ClockNoise noise;
    noise.white_fm = p.getDouble("white_fm");
    noise.random_walk_fm = p.getDouble("random_walk_fm");
    noise.drift_per_s = p.getDouble("drift");
    noise.pm_index = p.getDouble("pm_index");
    noise.pm_frequency_hz = p.getDouble("pm_frequency");
    return SyntheticChannel::clock(channelArgument(p, "channel"), p.getDouble("frequency"),
                                   p.getDouble("jitter_ps"), noise);
  }
  if (kind == "partner") {
    const Parameters p = partnerSchema().validate(given, where);
    return SyntheticChannel::partner(channelArgument(p, "channel"),
                                     channelArgument(p, "partner_of"), p.getInt("delay_ps"),
                                     p.getDouble("jitter_ps"), p.getDouble("probability"));
  }
  throw InvalidArgument(where + ": kind '" + kind +
                        "' is unknown (valid: poisson, clock, partner)");
}

void requireNoTables(const SourceSpec& spec) {
  if (!spec.tables.empty()) {
    throw InvalidArgument("source '" + spec.kind + "' takes no table 'source." +
                          spec.tables.begin()->first + "'");
  }
}

std::unique_ptr<Source> mergedSource(const SourceSpec& spec) {
  for (const auto& [name, tables] : spec.tables) {
    if (name != "input") {
      throw InvalidArgument("source 'merged' takes no table 'source." + name +
                            "' (valid: source.input)");
    }
  }
  const Parameters p = mergedSchema().validate(withoutKind(spec.parameters), "source 'merged'");
  std::vector<MergedInput> inputs;
  const auto found = spec.tables.find("input");
  const std::size_t count = found == spec.tables.end() ? 0 : found->second.size();
  for (std::size_t i = 0; i < count; ++i) {
    const Parameters& given = found->second[i];
    const std::string where = "source.input #" + std::to_string(i);
    SourceSpec inner;
    inner.kind = given.contains("kind") ? given.getString("kind") : "";
    if (inner.kind.empty() || inner.kind == "merged") {
      std::string valid;
      for (const SourceKind& kind : sourceKinds()) {
        if (kind.schema->kind() == "merged") continue;
        valid += (valid.empty() ? "" : ", ") + kind.schema->kind();
      }
      throw InvalidArgument(where + (inner.kind.empty() ? ": kind is missing" : ": kind 'merged'") +
                            " (valid: " + valid + ")");
    }
    Parameters offsets;
    for (const auto& [key, value] : given.entries()) {
      (key == "channel_offset" || key == "time_offset_ps" ? offsets : inner.parameters)
          .set(key, value);
    }
    const Parameters shift = mergedInputSchema().validate(offsets, where);
    try {
      inputs.push_back(MergedInput{makeSource(inner),
                                   static_cast<channel_t>(shift.getInt("channel_offset")),
                                   shift.getInt("time_offset_ps")});
    } catch (const InvalidArgument& error) {
      const std::string what = error.what();
      throw InvalidArgument(where + ": " + what +
                            (what.find("unknown key") == std::string::npos
                                 ? ""
                                 : "; an input also takes channel_offset and time_offset_ps"));
    }
  }
  if (inputs.empty()) {
    throw InvalidArgument("source 'merged' has no [[source.input]] table (valid: one or more)");
  }
  return std::make_unique<MergedSource>(std::move(inputs), p.getBool("overlap_only", false),
                                        static_cast<std::size_t>(p.getInt("block_size")));
}

// The keys of every vendor file source: the file, the block size and the channel numbering.
// The keys of every vendor format, then those of the formats that take options of their own:
// `format` is one of vendorFormats() or "file" (any of them, recognised from the content).
std::vector<ParameterSpec> vendorKeys(const std::string& format) {
  std::vector<ParameterSpec> keys{
      ParameterSpec::text("path").help("file to read"), blockSizeKey(kDefaultBlockSize),
      ParameterSpec::channel("first_input_channel")
          .byDefault(std::int64_t{1})
          .help("channel of the vendor's input 0 (input k becomes this + k)"),
      ParameterSpec::channel("sync_channel")
          .byDefault(std::int64_t{100})
          .help("channel of the sync"),
      ParameterSpec::channel("first_marker_channel")
          .byDefault(std::int64_t{200})
          .help("channel of marker bit 0 (bit b becomes this + b)")};
  // With "file" the format is known only once the file is opened: these keys are optional there
  // and refused for a file of another format.
  const bool any = format == "file";
  if (format == "spc" || any) {
    keys.push_back(ParameterSpec::text("set_file")
                       .optional()
                       .help("spc: the .set file (default: the .spc's path with the extension "
                             ".set, when it exists)"));
    keys.push_back(ParameterSpec::real("macrotime_clock_ns")
                       .atLeast(0)
                       .atMost(1e9)
                       .unit("ns")
                       .optional()
                       .help("spc: the macrotime clock period where the file does not state it "
                             "(default: from the first record, else the .set file)"));
  }
  if (format == "qutag" || any) {
    const ParameterSpec window = ParameterSpec::integer("reorder_window_ps")
                                     .atLeast(0)
                                     .unit("ps")
                                     .help(
                                         "qutag: how much earlier than the latest stamp a "
                                         "stamp may be and still be put in order");
    keys.push_back(any ? window.optional() : window.byDefault(std::int64_t{100'000}));
  }
  return keys;
}

const ParameterSchema& vendorSchema(const std::string& format) {
  static std::map<std::string, ParameterSchema> schemas = [] {
    std::map<std::string, ParameterSchema> made;
    for (const std::string& name : vendorFormats()) {
      made.emplace(
          name, ParameterSchema(name, fmt::format("a {} time-tag file", name), vendorKeys(name)));
    }
    std::vector<ParameterSpec> keys = vendorKeys("file");
    keys.push_back(ParameterSpec::text("format")
                       .byDefault(std::string("auto"))
                       .help("the vendor format, or auto: recognised from the file's content"));
    made.emplace("file", ParameterSchema("file",
                                         "any vendor time-tag file (PicoQuant, Becker & Hickl, "
                                         "quTAG), its format recognised from its content",
                                         keys));
    return made;
  }();
  return schemas.at(format);
}

// A key of "file" that the recognised format's own kind does not take: one of another
// format's options.
void refuseForeignKeys(const Parameters& p, const std::string& format) {
  const ParameterSchema& own = vendorSchema(format);
  for (const auto& [key, value] : p.entries()) {
    if (key == "format" || own.find(key) != nullptr) continue;
    std::string owners;
    for (const std::string& other : vendorFormats()) {
      if (vendorSchema(other).find(key) != nullptr) owners += (owners.empty() ? "" : ", ") + other;
    }
    throw InvalidArgument(
        fmt::format("source 'file': key '{}' applies to {} files only, and {} is a {} file", key,
                    owners, p.getString("path"), format));
  }
}

std::unique_ptr<Source> vendorSource(const SourceSpec& spec) {
  requireNoTables(spec);
  const ParameterSchema& schema = vendorSchema(spec.kind);
  const Parameters p = schema.validate(withoutKind(spec.parameters), "source '" + spec.kind + "'");
  VendorOpenOptions options;
  options.channels = {channelArgument(p, "first_input_channel"), channelArgument(p, "sync_channel"),
                      channelArgument(p, "first_marker_channel")};
  if (p.contains("macrotime_clock_ns"))
    options.spc_macrotime_clock_ns = p.getDouble("macrotime_clock_ns");
  if (p.contains("set_file")) options.spc_set_file = p.getString("set_file");
  if (p.contains("reorder_window_ps"))
    options.qutag_reorder_window_ps = p.getInt("reorder_window_ps");
  std::string format = spec.kind == "file" ? p.getString("format") : spec.kind;
  if (spec.kind == "file") {
    if (format == "auto") format = detectVendorFormat(p.getString("path"));
    // An unknown format or unrecognised file is left to openVendorFile, which names it.
    if (std::ranges::find(vendorFormats(), format) != vendorFormats().end())
      refuseForeignKeys(p, format);
  }
  VendorFile file = openVendorFile(p.getString("path"), format.empty() ? "auto" : format, options);
  for (const std::string& warning : file.warnings)
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  return std::make_unique<VendorFileSource>(std::move(file),
                                            static_cast<std::size_t>(p.getInt("block_size")));
}

}  // namespace

std::vector<SyntheticChannel> demoChannels() {
  return {SyntheticChannel::poisson(1, 20e6),   SyntheticChannel::partner(2, 1, 1000, 50, 0.5),
          SyntheticChannel::clock(3, 10e6, 10), SyntheticChannel::poisson(4, 1e6),
          SyntheticChannel::poisson(5, 2e6),    SyntheticChannel::poisson(6, 4e6),
          SyntheticChannel::poisson(7, 8e6),    SyntheticChannel::poisson(8, 16e6)};
}

SyntheticConfig syntheticConfigFrom(const SourceSpec& spec) {
  const Parameters p =
      syntheticSchema().validate(withoutKind(spec.parameters), "source 'synthetic'");
  SyntheticConfig config;
  config.seed = static_cast<std::uint64_t>(p.getInt("seed"));
  config.block_size = static_cast<std::size_t>(p.getInt("block_size"));
  config.max_block_duration_ps = p.getInt("max_block_duration_ps");
  config.duration_ps = p.getInt("duration_ps");
  config.start_time_ps = p.getInt("start_time_ps");
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
      const Parameters o =
          overflowSchema().validate(it->second[i], "source.overflow #" + std::to_string(i));
      config.overflows.push_back(OverflowInterval{o.getInt("begin_ps"), o.getInt("end_ps")});
    }
  }
  config.validate();
  return config;
}

const std::vector<SourceKind>& sourceKinds() {
  static const std::vector<SourceKind> kinds = {
      {&syntheticSchema(),
       {&poissonSchema(), &clockSchema(), &partnerSchema(), &overflowSchema()},
       [](const SourceSpec& spec) -> std::unique_ptr<Source> {
         auto source = std::make_unique<SyntheticSource>(syntheticConfigFrom(spec));
         const double speed = syntheticSchema()
                                  .validate(withoutKind(spec.parameters), "source 'synthetic'")
                                  .getDouble("speed");
         if (speed < 0) return source;
         return std::make_unique<PacedSource>(std::move(source), speed);
       }},
      {&rawSchema(),
       {},
       [](const SourceSpec& spec) -> std::unique_ptr<Source> {
         requireNoTables(spec);
         const Parameters p = rawSchema().validate(withoutKind(spec.parameters), "source 'raw'");
         return std::make_unique<RawFileSource>(p.getString("path"),
                                                static_cast<std::size_t>(p.getInt("block_size")));
       }},
      {&tagfileSchema(),
       {},
       [](const SourceSpec& spec) -> std::unique_ptr<Source> {
         requireNoTables(spec);
         const Parameters p =
             tagfileSchema().validate(withoutKind(spec.parameters), "source 'tagfile'");
         return std::make_unique<FileReader>(p.getString("path"),
                                             static_cast<std::size_t>(p.getInt("block_size")),
                                             p.getDouble("speed"));
       }},
      {&photonHdf5Schema(),
       {},
       [](const SourceSpec& spec) -> std::unique_ptr<Source> {
         requireNoTables(spec);
         const Parameters p =
             photonHdf5Schema().validate(withoutKind(spec.parameters), "source 'photon_hdf5'");
         return std::make_unique<PhotonHdf5Source>(
             p.getString("path"), static_cast<std::size_t>(p.getInt("block_size")));
       }},
      {&mergedSchema(), {&mergedInputSchema()}, mergedSource},
      {&udpSourceSchema(),
       {},
       [](const SourceSpec& spec) -> std::unique_ptr<Source> {
         requireNoTables(spec);
         return std::make_unique<UdpStreamSource>(
             udpSourceConfigFrom(withoutKind(spec.parameters)));
       },
       true},
  };
  static const std::vector<SourceKind> all = [] {
    std::vector<SourceKind> joined = kinds;
    joined.push_back({&vendorSchema("file"), {}, vendorSource});
    for (const std::string& format : vendorFormats()) {
      joined.push_back({&vendorSchema(format), {}, vendorSource});
    }
    return joined;
  }();
  return all;
}

const ParameterSchema& inputDelaySchema() {
  static const ParameterSchema schema(
      "delay",
      "[[source.delay]]: any kind: an input delay, as a time tagger's setInputDelay(): this "
      "channel's tags come this much later (earlier when negative)",
      {ParameterSpec::channel("channel").help("the channel (one edge: -c is its falling edge)"),
       ParameterSpec::integer("delay_ps")
           .unit("ps")
           .atLeast(-0x1p62)
           .atMost(0x1p62)
           .help("added to the channel's times")});
  return schema;
}

std::unique_ptr<Source> makeSource(const SourceSpec& spec) {
  if (const auto found = spec.tables.find("delay"); found != spec.tables.end()) {
    std::vector<InputDelay> delays;
    for (std::size_t i = 0; i < found->second.size(); ++i) {
      const Parameters p =
          inputDelaySchema().validate(found->second[i], "source.delay #" + std::to_string(i));
      delays.push_back({channelArgument(p, "channel"), p.getInt("delay_ps")});
    }
    SourceSpec undelayed = spec;
    undelayed.tables.erase("delay");
    return withInputDelays(makeSource(undelayed), std::move(delays));
  }
  std::vector<std::string> valid;
  for (const auto& kind : sourceKinds()) {
    if (kind.schema->kind() == spec.kind) return kind.make(spec);
    valid.push_back(kind.schema->kind());
  }
  throwUnknownKind("source", spec.kind, valid);
}

bool comesOnce(const SourceSpec& spec) {
  const auto kindComesOnce = [](std::string_view name) {
    return std::ranges::any_of(sourceKinds(), [&](const SourceKind& kind) {
      return kind.comes_once && kind.schema->kind() == name;
    });
  };
  if (kindComesOnce(spec.kind)) return true;
  const auto inputs = spec.tables.find("input");
  if (spec.kind != mergedSchema().kind() || inputs == spec.tables.end()) return false;
  return std::ranges::any_of(inputs->second, [&](const Parameters& input) {
    const auto* kind =
        input.contains("kind") ? std::get_if<std::string>(&input.at("kind")) : nullptr;
    return kind != nullptr && kindComesOnce(*kind);
  });
}

Parameters sourceStatistics(const Source& source) {
  if (const auto* delayed = dynamic_cast<const InputDelaySource*>(&source)) {
    return sourceStatistics(delayed->inner());
  }
  if (const auto* udp = dynamic_cast<const UdpStreamSource*>(&source)) {
    return udp->stats().toParameters();
  }
  if (const auto* vendor = dynamic_cast<const VendorFileSource*>(&source)) {
    const VendorFile& file = vendor->file();
    Parameters provenance{{"kind", std::string("vendor file")},
                          {"format", file.format},
                          {"path", file.path},
                          {"records", static_cast<std::int64_t>(file.records)}};
    for (const auto& [key, value] : file.provenance.entries()) provenance.set(key, value);
    return provenance;
  }
  return {};
}

}  // namespace tagflow
