// tagflow: the command-line front end. `tagflow run CONFIG.toml` builds a measurement graph
// from a configuration, runs it with live progress, prints the profile and writes HDF5;
// `tagflow record CONFIG.toml OUT.raw` writes a source's stream to a raw tag file;
// `tagflow plot RESULTS.h5` draws the figures of a results file.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5_writer.hpp"

int main(int argc, char** argv) {
  using namespace tagflow;
  CLI::App app{"tagflow: time-tag stream processing engine"};
  app.set_version_flag("--version", tagflowVersion());
  app.require_subcommand(1);

  cli::RunOptions run_options;
  auto* run = app.add_subcommand("run", "run a measurement graph from a TOML configuration");
  run->add_option("config", run_options.config_path, "configuration file (TOML)")->required();
  run->add_option("-o,--output", run_options.output, "HDF5 output file (overrides [run] output)");
  run->add_option("--trace", run_options.trace_path, "write a Chrome trace-event JSON timeline");
  run->add_option("-t,--threads", run_options.threads, "worker threads (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  run->add_flag("-q,--quiet", run_options.quiet, "print nothing but errors");
  run->footer(cli::kindsHelp());

  std::string record_config, record_output;
  auto* record = app.add_subcommand("record", "write a source's stream to a raw tag file");
  record->add_option("config", record_config, "configuration file (TOML); its [source] is read")
      ->required();
  record->add_option("output", record_output, "raw tag file to write")->required();

  cli::PlotOptions plot_options;
  auto* plot = app.add_subcommand("plot", "write one figure per measurement of a results file");
  plot->add_option("results", plot_options.results_path, "HDF5 results file")->required();
  plot->add_option("-o,--output", plot_options.output_folder,
                   "folder for the figures (default: <results stem>_plots next to the file)");
  plot->add_option("--format", plot_options.format, "image format (default: png)")
      ->check(CLI::IsMember({"png", "svg", "pdf"}));
  plot->footer("The plotter is tools/plot/tagflow_plot.py; TAGFLOW_PLOT_SCRIPT overrides it.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }

  try {
    if (*run) return cli::runCommand(run_options);
    if (*record) return cli::recordCommand(record_config, record_output);
    if (*plot) return cli::plotCommand(plot_options);
  } catch (const InvalidArgument& error) {
    std::cerr << "tagflow: error: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "tagflow: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
