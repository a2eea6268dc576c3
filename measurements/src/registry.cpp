#include "tagflow/measurements/registry.hpp"

#include <limits>

#include "tagflow/core/error.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/file_writer.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"
#include "tagflow/measurements/phase_noise.hpp"

namespace tagflow {

namespace {

channel_t checkedChannel(std::int64_t value, std::string_view key) {
  if (value < std::numeric_limits<channel_t>::min() ||
      value > std::numeric_limits<channel_t>::max()) {
    throw InvalidArgument("key '" + std::string(key) + "': channel " + std::to_string(value) +
                          " is out of range (valid: 32-bit signed integers)");
  }
  return static_cast<channel_t>(value);
}

channel_t singleChannel(const Parameters& parameters, std::string_view key) {
  return checkedChannel(parameters.getInt(key), key);
}

// A gate given as [open_channel, close_channel] or [open_channel, close_channel, initially_open].
std::optional<ChannelGate> gateFrom(const Parameters& parameters, std::string_view key) {
  if (!parameters.contains(key)) return std::nullopt;
  const auto values = parameters.getIntList(key);
  if (values.size() != 2 && values.size() != 3) {
    throw InvalidArgument("key '" + std::string(key) + "' has " + std::to_string(values.size()) +
                          " values; it must be [open_channel, close_channel] or [open_channel, "
                          "close_channel, initially_open (0 or 1)]");
  }
  return ChannelGate{checkedChannel(values[0], key), checkedChannel(values[1], key),
                     values.size() == 3 && values[2] != 0};
}

std::vector<MeasurementKind> buildKinds() {
  std::vector<MeasurementKind> kinds;
  kinds.push_back(MeasurementKind{
      "Counter",
      "counts per channel in consecutive bins, the last n_values bins kept",
      {{"channels", "list of channels to count"},
       {"binwidth", "bin width in ps (> 0), default 1e9"},
       {"n_values", "number of bins kept per channel (> 0), default 1"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<Measurement> {
        p.requireOnly({"channels", "binwidth", "n_values"}, "Counter '" + name + "'");
        return std::make_unique<Counter>(name, channelList(p, "channels"),
                                         p.getInt("binwidth", 1'000'000'000),
                                         p.getInt("n_values", 1));
      }});
  kinds.push_back(MeasurementKind{
      "Countrate",
      "average rate per channel since the start, missed events included",
      {{"channels", "list of channels"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<Measurement> {
        p.requireOnly({"channels"}, "Countrate '" + name + "'");
        return std::make_unique<Countrate>(name, channelList(p, "channels"));
      }});
  kinds.push_back(MeasurementKind{
      "Correlation",
      "histogram of tau = t(channel_1) - t(channel_2), bins centred on zero, g2",
      {{"channel_1", "channel whose events come after for tau > 0"},
       {"channel_2", "reference channel; leave out for an auto-correlation"},
       {"binwidth", "bin width in ps (> 0), default 1000"},
       {"n_bins", "number of bins (> 0), default 1000"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<Measurement> {
        p.requireOnly({"channel_1", "channel_2", "binwidth", "n_bins"},
                      "Correlation '" + name + "'");
        return std::make_unique<Correlation>(
            name, singleChannel(p, "channel_1"),
            p.contains("channel_2") ? singleChannel(p, "channel_2") : CHANNEL_UNUSED,
            p.getInt("binwidth", 1000), p.getInt("n_bins", 1000));
      }});
  kinds.push_back(MeasurementKind{
      "HistogramLogBins",
      "start-click time differences in logarithmic bins from 10^exp_start to 10^exp_stop s",
      {{"click_channel", "channel of the clicks"},
       {"start_channel", "channel of the starts"},
       {"exp_start", "lowest edge, exponent of seconds (>= -12)"},
       {"exp_stop", "highest edge, exponent of seconds (> exp_start, <= 6)"},
       {"n_bins", "number of bins (> 0)"},
       {"click_gate", "optional [open_channel, close_channel, initially_open (0/1)]"},
       {"start_gate", "optional [open_channel, close_channel, initially_open (0/1)]"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<Measurement> {
        p.requireOnly({"click_channel", "start_channel", "exp_start", "exp_stop", "n_bins",
                       "click_gate", "start_gate"},
                      "HistogramLogBins '" + name + "'");
        return std::make_unique<HistogramLogBins>(
            name, singleChannel(p, "click_channel"), singleChannel(p, "start_channel"),
            p.getDouble("exp_start"), p.getDouble("exp_stop"), p.getInt("n_bins"),
            gateFrom(p, "click_gate"), gateFrom(p, "start_gate"));
      }});
  kinds.push_back(MeasurementKind{
      "FrequencyStability",
      "overlapping Allan, modified Allan and Hadamard deviations and traces of a clock",
      {{"channel", "channel of the clock"},
       {"steps", "list of steps n (>= 1): tau = n * average * measured period"},
       {"average", "edges averaged into one phase sample (>= 1), default 1000"},
       {"trace_len", "samples kept for the traces (>= 0), default 1000"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<Measurement> {
        p.requireOnly({"channel", "steps", "average", "trace_len"},
                      "FrequencyStability '" + name + "'");
        return std::make_unique<FrequencyStability>(
            name, singleChannel(p, "channel"), p.getIntList("steps"), p.getInt("average", 1000),
            p.getInt("trace_len", 1000));
      }});
  kinds.push_back(MeasurementKind{
      "PhaseNoise",
      "single-sideband phase noise L(f) of one or more clocks, octave-decimated Welch spectra",
      {{"channels", "list of clock channels, one spectrum each"},
       {"samples_per_octave", "points per octave (2..65536), default 64"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<Measurement> {
        p.requireOnly({"channels", "samples_per_octave"}, "PhaseNoise '" + name + "'");
        return std::make_unique<PhaseNoise>(
            name, channelList(p, "channels"),
            p.getInt("samples_per_octave", PhaseNoise::kDefaultSamplesPerOctave));
      }});
  kinds.push_back(MeasurementKind{
      "FileWriter",
      "records the tags of the channels (and all overflow, missed-events, error tags) to a tag "
      "file",
      {{"path", "tag file to write; further parts get .1, .2, ... before the extension"},
       {"channels", "list of channels to record"},
       {"max_file_size", "bytes after which a new part begins, default 2^30"},
       {"compression", "none (default), zstd or lz4 behind the packed blocks"},
       {"configuration", "text stored in the file as the source's configuration, default none"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<Measurement> {
        p.requireOnly({"path", "channels", "max_file_size", "compression", "configuration"},
                      "FileWriter '" + name + "'");
        const std::int64_t max_file_size =
            p.getInt("max_file_size", static_cast<std::int64_t>(kDefaultMaxFileSize));
        if (max_file_size < static_cast<std::int64_t>(kMinMaxFileSize)) {
          throw InvalidArgument(
              "FileWriter '" + name + "': max_file_size " + std::to_string(max_file_size) +
              " bytes is invalid (valid: >= " + std::to_string(kMinMaxFileSize) + ")");
        }
        return std::make_unique<FileWriter>(
            name, p.getString("path"), channelList(p, "channels"),
            static_cast<std::uint64_t>(max_file_size), p.getString("configuration", ""),
            tagfile::compressionFromName(p.getString("compression", "none")));
      }});
  return kinds;
}

}  // namespace

std::vector<channel_t> channelList(const Parameters& parameters, std::string_view key) {
  std::vector<channel_t> channels;
  for (std::int64_t value : parameters.getIntList(key))
    channels.push_back(checkedChannel(value, key));
  return channels;
}

const std::vector<MeasurementKind>& measurementKinds() {
  static const std::vector<MeasurementKind> kinds = buildKinds();
  return kinds;
}

std::unique_ptr<Measurement> makeMeasurement(std::string_view kind, const std::string& name,
                                             const Parameters& parameters) {
  std::string known;
  for (const auto& entry : measurementKinds()) {
    if (entry.kind == kind) return entry.make(name, parameters);
    known += (known.empty() ? "" : ", ") + std::string(entry.kind);
  }
  throw InvalidArgument("unknown measurement kind '" + std::string(kind) + "' (valid: " + known +
                        ")");
}

}  // namespace tagflow
