// libFuzzer target for `tagflow run` configuration files: the input is read by the command's
// loader (parseRunConfig) and its source and graph built by the command's code (makeSource,
// buildGraph), which reaches every source, virtual channel and measurement kind a file can
// name. A graph over the synthetic source then runs a short slice of stream time (a few
// thousand tags, at most 64 blocks) on one thread, with at most 4 blocks in flight. Nothing
// leaves the process: sources that read files are pointed at a path that does not exist and
// the graph is built over an empty stand-in source, the UDP source's settings are checked
// without opening its socket, and a FileWriter creates its file in a private scratch folder,
// emptied after each input, and is never run. Inputs that validly ask for more memory than
// the fuzzer allows (bins, block pools) are left unbuilt or unrun. Any outcome but
// InvalidArgument, DataError or IoError is a finding.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graph_builder.hpp"
#include "run_config.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/udp/stream_source.hpp"

using namespace tagflow;

namespace {

// The slice a synthetic graph runs: about this many tags, at most this many blocks (a source
// with tiny blocks), at most this long (a slow source).
constexpr double kSliceTags = 4096;
constexpr timestamp_t kSliceBlocks = 64;
constexpr timestamp_t kMaxSlicePs = 1'000'000'000;
// Bound on the block buffers a run allocates (its pools), so that the slice stays cheap; larger
// configurations are built but not run.
constexpr std::size_t kMaxPoolBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxBlocksInFlight = 4;
// Keys that size a node's memory, one value per bin, per channel listed: a configuration may
// validly ask for up to 2^28 values (2 GiB) per node, beyond the fuzzer's memory limit, so
// inputs asking for more than kMaxValues in all are not built.
constexpr std::array<std::string_view, 3> kSizeKeys = {"n_values", "n_bins", "trace_len"};
constexpr double kMaxValues = 1 << 22;

// One folder per process, removed at exit.
struct Scratch {
  std::filesystem::path folder = std::filesystem::temp_directory_path() /
                                 ("tagflow_fuzz_run_config_" + std::to_string(getpid()));
  Scratch() { std::filesystem::create_directories(folder); }
  ~Scratch() { std::filesystem::remove_all(folder); }
  void empty() const {
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      std::filesystem::remove_all(entry.path());
    }
  }
};

// Points every path of the configuration into the scratch folder: a file source at a file that
// does not exist, each FileWriter at a file of its own. Values of the wrong type are kept, for
// the schemas to refuse.
void confine(cli::RunConfig& config, const Scratch& scratch) {
  Parameters& source = config.source.parameters;
  if (source.contains("path") && std::holds_alternative<std::string>(source.at("path"))) {
    source.set("path", (scratch.folder / "absent" / "path").string());
  }
  for (std::size_t i = 0; i < config.measurements.size(); ++i) {
    Parameters& parameters = config.measurements[i].parameters;
    if (config.measurements[i].kind == "FileWriter" && parameters.contains("path") &&
        std::holds_alternative<std::string>(parameters.at("path"))) {
      parameters.set("path", (scratch.folder / ("recording" + std::to_string(i))).string());
    }
  }
}

// The source `tagflow run` would build, or null where it would read a file or a socket (the
// settings are checked all the same, as far as they can be without one).
std::unique_ptr<Source> makeConfinedSource(const SourceSpec& spec) {
  if (spec.kind == "udp") {
    Parameters settings;
    for (const auto& [key, value] : spec.parameters.entries()) {
      if (key != "kind") settings.set(key, value);
    }
    udpSourceConfigFrom(settings);
    return nullptr;
  }
  try {
    return makeSource(spec);
  } catch (const IoError&) {
    return nullptr;  // a file source: its file is not there
  }
}

bool hasFileWriter(const cli::RunConfig& config) {
  return std::any_of(config.measurements.begin(), config.measurements.end(),
                     [](const cli::MeasurementSpec& spec) { return spec.kind == "FileWriter"; });
}

// The values the nodes' sizing keys ask for, counted as kSizeKeys says.
double sizedValues(const cli::RunConfig& config) {
  double values = 0;
  for (const auto* specs : {&config.channels, &config.measurements}) {
    for (const cli::MeasurementSpec& spec : *specs) {
      const Parameters& p = spec.parameters;
      double channels = 1;
      if (p.contains("channels")) {
        if (const auto* list = std::get_if<std::vector<std::int64_t>>(&p.at("channels"))) {
          channels = std::max<double>(1, static_cast<double>(list->size()));
        } else if (const auto* names = std::get_if<std::vector<std::string>>(&p.at("channels"))) {
          channels = std::max<double>(1, static_cast<double>(names->size()));
        }
      }
      for (std::string_view key : kSizeKeys) {
        if (!p.contains(key)) continue;
        if (const auto* value = std::get_if<std::int64_t>(&p.at(key))) {
          values += channels * static_cast<double>(std::max<std::int64_t>(*value, 0));
        }
      }
    }
  }
  return values;
}

// What the run's pools allocate: the source's and one per virtual channel.
std::size_t poolBytes(const Source& source, std::size_t channels, std::size_t in_flight) {
  const std::size_t pool_blocks = in_flight + 2;
  const std::size_t source_tags = source.maxBlockTags();
  const std::size_t channel_tags = VirtualChannel::outputBufferTags(source_tags);
  return pool_blocks * (source_tags + channels * channel_tags) * sizeof(Tag);
}

void runConfiguration(const std::string& text, const Scratch& scratch) {
  cli::RunConfig config = cli::parseRunConfig(text, "fuzz input");
  if (sizedValues(config) > kMaxValues) return;
  confine(config, scratch);
  std::unique_ptr<Source> source = makeConfinedSource(config.source);
  const auto* synthetic = dynamic_cast<const SyntheticSource*>(source.get());
  // Accepts any channel below the virtual range, as a source that does not know its own.
  MemorySource stand_in(std::make_shared<const std::vector<Tag>>(), 1, 0, 1);

  GraphOptions options;
  options.threads = 1;
  options.max_blocks_in_flight = std::min(config.max_blocks_in_flight, kMaxBlocksInFlight);
  options.first_virtual_channel = config.first_virtual_channel;
  MeasurementGraph graph(source ? *source : stand_in, options);
  const cli::BuiltGraph nodes = cli::buildGraph(config, graph);
  if (synthetic == nullptr || hasFileWriter(config) ||
      poolBytes(*source, nodes.channels.size(), options.max_blocks_in_flight) > kMaxPoolBytes) {
    return;
  }
  const SyntheticConfig& stream = synthetic->config();
  const double slice_ps = kSliceTags / stream.totalRateHz() * 1e12;
  timestamp_t duration = slice_ps < static_cast<double>(kMaxSlicePs)
                             ? std::max<timestamp_t>(1, static_cast<timestamp_t>(slice_ps))
                             : kMaxSlicePs;
  if (stream.max_block_duration_ps < duration / kSliceBlocks) {
    duration = stream.max_block_duration_ps * kSliceBlocks;
  }
  if (config.duration_ps > 0) duration = std::min(duration, config.duration_ps);
  graph.run(duration);
  for (const auto& measurement : nodes.measurements) measurement->getResults();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Scratch scratch;
  try {
    runConfiguration(std::string(reinterpret_cast<const char*>(data), size), scratch);
  } catch (const InvalidArgument&) {
  } catch (const DataError&) {
  } catch (const IoError&) {
  }
  scratch.empty();
  return 0;
}
