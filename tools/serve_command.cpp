#include <iostream>

#include "commands.hpp"
#include "damaged_tail.hpp"
#include "error_context.hpp"
#include "graph_builder.hpp"
#include "interrupts.hpp"
#include "path_plan.hpp"
#include "recording_guards.hpp"
#include "run_config.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/serve/server.hpp"

namespace tagflow::cli {

int serveCommand(const ServeCommandOptions& options) {
  RunConfig config = loadRunConfig(options.config_path);
  overrideRun(config, options.output, options.threads);
  runPaths(config, options.config_path).check();
  checkOutputWritable(config.output);  // before a FileWriter creates its file
  RecordingGuards recordings(config);

  std::unique_ptr<Source> source =
      withContext("[source]", [&] { return makeSource(config.source); });
  DamagedTailGuard guarded(*source);
  MeasurementGraph graph(guarded, graphOptionsOf(config));
  const BuiltGraph nodes = buildGraph(config, graph);

  ServeOptions serve_options;
  serve_options.address = options.address;
  serve_options.port = options.port;
  serve_options.update_hz = options.update_hz;
  serve_options.web_root = options.web_root;
  serve_options.token = options.token;
  serve_options.source = source.get();
  serve_options.config_text = config.text;
  Server server(graph, serve_options);
  // The first line says where to look; tests and scripts read the URL from it.
  std::cout << "serving " << server.url() << std::endl;
  if (!options.quiet) {
    std::cout << "source: " << source->describe() << "\nrunning " << nodes.measurements.size()
              << " measurement(s); Ctrl-C or \"Stop run\" on the page ends the run" << std::endl;
  }

  Interrupts interrupts([&] { server.requestStop(); });
  Interrupts::abandon({resultsTemporaryPath(config.output)});
  Profile profile;
  recordings.commit();
  try {
    profile = graph.run(config.duration_ps);
  } catch (const std::exception& e) {
    std::cerr << "tagflow: error: " << e.what() << "\n";
    server.setRunState(RunState::Failed, e.what());
    server.waitUntilStopRequested();
    throw;
  }
  // Stopped from the page or by a signal before the stream ended: the results cover part of
  // it, as the page's download says too.
  const bool stopped_early = server.stopRequested();
  // 128 + the signal only for a signal that stopped the run: one after the stream ended just
  // ends the showing of the final results, as "Stop run" does.
  const int signal_exit = stopped_early ? interrupts.exitCode() : 0;
  server.setFinalProfile(profile);
  server.setRunState(stopped_early ? RunState::Stopped : RunState::Finished, guarded.damage());
  if (!stopped_early && !options.quiet) {
    std::cout << "the stream ended; the page shows the final results until Ctrl-C or \"Stop "
                 "run\""
              << std::endl;
  }
  server.waitUntilStopRequested();

  RunInfo info = runInfoOf(*source, graph, config.text);
  info.interrupted = stopped_early;
  info.damaged_tail = guarded.damage();
  writeResultsHdf5(config.output, nodes.results(), profile, info);
  if (!options.quiet) {
    std::cout << "\nprofile:\n";
    printProfile(std::cout, profile);
    std::cout << "\nresults written to " << config.output << "\n";
  }
  const int damaged = guarded.report(config.output);
  return signal_exit != 0 ? signal_exit : damaged;
}

}  // namespace tagflow::cli
