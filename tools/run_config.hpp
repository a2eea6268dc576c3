// RunConfig: a `tagflow run` configuration file (TOML) read into plain values: the [run]
// settings, the [source] spec, the [[channel]] list (virtual channels) and the [[measurement]]
// list. TOML values map onto Parameters
// (integers, floats, booleans, strings, lists of integers or numbers); anything else, an
// unknown key or a missing one is an InvalidArgument that names the key and its place.
#pragma once

#include <string>
#include <vector>

#include "tagflow/core/parameters.hpp"
#include "tagflow/io/source_registry.hpp"

namespace tagflow::cli {

struct MeasurementSpec {
  std::string kind;
  std::string name;
  Parameters parameters;  // without kind, name and parallel
  // A measurement's shards on as many cores (ShardedMeasurement); 1 runs it as one node.
  std::int64_t parallel = 1;
};

struct RunConfig {
  std::string output = "results.h5";
  timestamp_t duration_ps = -1;
  int threads = 0;
  std::size_t max_blocks_in_flight = 8;
  channel_t first_virtual_channel = 0;  // GraphOptions::first_virtual_channel
  double checkpoint_s = 0;  // write the results this often while running; 0: at the end only
  SourceSpec source;
  std::vector<MeasurementSpec> channels;  // [[channel]]: virtual channels
  std::vector<MeasurementSpec> measurements;
  std::string text;  // the file as read, stored with the results
};

// Commands that only use the source (record, stream send) pass need_measurements = false.
RunConfig loadRunConfig(const std::string& path, bool need_measurements = true);
RunConfig parseRunConfig(const std::string& text, const std::string& origin,
                         bool need_measurements = true);
// A command line's choices over the file's [run] table: an output path (empty: the file's)
// and a thread count (negative: the file's).
void overrideRun(RunConfig& config, const std::string& output, int threads);

struct Recording {
  std::string writer;  // the FileWriter's name
  std::string path;
};
// The recording of every FileWriter that gives its path as text.
std::vector<Recording> recordingsOf(const RunConfig& config);

}  // namespace tagflow::cli
