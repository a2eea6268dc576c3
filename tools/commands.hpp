// The `tagflow` subcommands. Each returns the process exit code: 0 on success, 1 when the
// run failed (I/O, bad data), 2 when the configuration or arguments were invalid.
#pragma once

#include <string>

namespace tagflow::cli {

struct RunOptions {
  std::string config_path;
  std::string output;      // overrides [run] output when not empty
  std::string trace_path;  // Chrome trace-event JSON, when not empty
  int threads = -1;        // overrides [run] threads when >= 0
  bool quiet = false;
};

int runCommand(const RunOptions& options);

// Writes the configured source's stream (up to [run] duration_ps) to a raw tag file.
int recordCommand(const std::string& config_path, const std::string& output);

// The text of `tagflow run --help`'s list of source and measurement kinds with their keys.
std::string kindsHelp();

struct PlotOptions {
  std::string results_path;
  std::string output_folder;  // default: <results stem>_plots next to the results file
  std::string format = "png";
};

// Writes one figure per measurement group of a results file (and one of the profile) by
// running the Python plotter; returns its exit status.
int plotCommand(const PlotOptions& options);

}  // namespace tagflow::cli
