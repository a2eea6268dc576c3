#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>

#include "commands.hpp"
#include "damaged_tail.hpp"
#include "distributed_run.hpp"
#include "error_context.hpp"
#include "graph_builder.hpp"
#include "interrupts.hpp"
#include "path_plan.hpp"
#include "recording_guards.hpp"
#include "run_config.hpp"
#include "tagflow/channels/registry.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/result_codec.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/kinds.hpp"

namespace tagflow::cli {

namespace {

void printProgress(const Progress& progress) {
  const double rate = progress.elapsed_s > 0 ? progress.tags / progress.elapsed_s * 1e-6 : 0;
  std::fprintf(stderr, "\r  %10.1f M tags | %8.1f MTags/s | stream %10.4f s | elapsed %7.1f s",
               progress.tags * 1e-6, rate, progress.stream_time_ps * 1e-12, progress.elapsed_s);
  std::fflush(stderr);
}

// Writes the results every `interval_s` while the graph runs, each time atomically (a crash
// keeps the last one), until stopped. A write that fails (a full disk, the folder gone) stops
// the checkpoints and calls `failed`, which ends the run; rethrowFailure() then throws it.
class Checkpoints {
 public:
  Checkpoints(double interval_s, std::function<void()> write, std::function<void()> failed)
      : write_(std::move(write)), failed_(std::move(failed)) {
    if (interval_s <= 0) return;
    thread_ = std::thread([this, interval_s] {
      std::unique_lock lock(mutex_);
      const auto interval = std::chrono::duration<double>(interval_s);
      while (!cv_.wait_for(lock, interval, [this] { return stopping_; })) {
        lock.unlock();
        try {
          write_();
        } catch (...) {
          lock.lock();
          error_ = std::current_exception();
          lock.unlock();
          failed_();
          return;
        }
        lock.lock();
      }
    });
  }
  ~Checkpoints() { stop(); }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void rethrowFailure() const {
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::function<void()> write_;
  std::function<void()> failed_;
  std::exception_ptr error_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

// One rank's run: this rank's range, its partial states and profile sent to rank 0, which
// merges them (in rank order: the ranges follow each other) into its own measurements and
// returns the profile of every rank.
Profile runShareOfRanks(const DistributedRun& distributed, const RunConfig& config, Source& source,
                        MeasurementGraph& graph,
                        const std::vector<std::unique_ptr<Measurement>>& measurements) {
  const std::optional<StreamSpan> span = source.timeSpan();
  if (!span) {
    throw InvalidArgument("a run over " + std::to_string(distributed.size()) +
                          " MPI ranks needs a source that knows its time range and can seek to "
                          "any time (a tag file whose parts end with their time index); this "
                          "one cannot: " +
                          source.describe());
  }
  const timestamp_t end =
      config.duration_ps > 0 ? std::min(span->end, span->begin + config.duration_ps) : span->end;
  // begin + length * rank / ranks, exactly and without overflow.
  const auto share = [&, length = end - span->begin, ranks = distributed.size()](int rank) {
    return span->begin + length / ranks * rank + length % ranks * rank / ranks;
  };

  const int rank = distributed.rank();
  const Profile own = graph.runRange(share(rank), share(rank + 1), span->begin);
  std::vector<ResultSet> states;
  for (const auto& measurement : measurements) states.push_back(measurement->getPartialState());
  const auto all_states = distributed.gatherAtRoot(encodeResultSets(states));
  const auto all_profiles = distributed.gatherAtRoot(encodeProfile(own));
  if (rank != 0) return own;
  Profile combined = own;
  combined.nodes.clear();
  combined.tags = combined.blocks = 0;
  // The stream time the results cover; the ranks' own durations include their margins, which
  // overlap the neighbours' shares. tags and blocks stay the sums of what the ranks read.
  combined.stream_duration_ps = end - span->begin;
  for (int r = 0; r < distributed.size(); ++r) {
    const Profile profile = decodeProfile(all_profiles[static_cast<std::size_t>(r)]);
    for (NodeProfile node : profile.nodes) {
      node.name = "rank " + std::to_string(r) + ": " + node.name;
      combined.nodes.push_back(std::move(node));
    }
    combined.tags += profile.tags;
    combined.blocks += profile.blocks;
    combined.wall_s = std::max(combined.wall_s, profile.wall_s);
    if (r == 0) continue;
    const std::vector<ResultSet> later = decodeResultSets(all_states[static_cast<std::size_t>(r)]);
    if (later.size() != measurements.size()) {
      throw DataError("rank " + std::to_string(r) + " sent " + std::to_string(later.size()) +
                      " partial results for " + std::to_string(measurements.size()) +
                      " measurements");
    }
    for (std::size_t m = 0; m < measurements.size(); ++m) {
      measurements[m]->mergePartialState(later[m]);
    }
  }
  return combined;
}

// mpirun binds each rank to one core by default, which leaves a rank's graph one thread even
// where the machine has cores to spare: say how to give them to the ranks.
void printBindingHint(const DistributedRun& distributed, int threads) {
  cpu_set_t allowed;
  if (threads > 0 || sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int usable = CPU_COUNT(&allowed);
  if (usable > 1 || cores <= distributed.localSize()) return;
  std::cout << "note: rank 0 may use " << usable << " of this machine's " << cores
            << " cores (mpirun binds each rank to one core by default); `mpirun --bind-to none`"
            << " or `--map-by slot:PE=" << cores / distributed.localSize() << "` gives each of the "
            << distributed.localSize() << " ranks here more\n";
}

int runOnce(const RunOptions& options, const DistributedRun& distributed) {
  const bool distributed_run = distributed.size() > 1;
  const bool speaks = distributed.rank() == 0;
  RunConfig config = loadRunConfig(options.config_path);
  overrideRun(config, options.output, options.threads);
  PathPlan paths = runPaths(config, options.config_path);
  paths.writes(options.trace_path, "--trace");
  paths.check();
  if (speaks) {
    // Before the graph: a FileWriter creates its file when it is made.
    checkOutputWritable(config.output);
    if (!options.trace_path.empty()) checkOutputWritable(options.trace_path, "trace");
  }

  if (distributed_run) {
    // Before any node is made: a FileWriter made on every rank would empty its path.
    for (const MeasurementSpec& spec : config.measurements) {
      if (!findKind(allMeasurementKinds(), spec.kind, "measurement").splits_by_time) {
        throw InvalidArgument(fmt::format(
            "{} '{}' cannot be split by time (it runs as one), so it cannot run over {} MPI "
            "ranks (valid: a run of one process)",
            spec.kind, spec.name, distributed.size()));
      }
    }
  }
  RecordingGuards recordings(config);  // none in a distributed run (refused above)

  std::unique_ptr<Source> source =
      withContext("[source]", [&] { return makeSource(config.source); });
  GraphOptions graph_options = graphOptionsOf(config);
  if (!options.trace_path.empty()) graph_options.max_trace_spans = 200000;
  const bool show_progress = !options.quiet && speaks && isatty(STDERR_FILENO);
  if (show_progress) graph_options.progress = printProgress;

  // A damaged tail of a file ends the stream: the results cover everything before it.
  DamagedTailGuard guarded(*source);
  MeasurementGraph graph(guarded, graph_options);
  const BuiltGraph nodes = buildGraph(config, graph);
  const auto& measurements = nodes.measurements;
  if (!options.quiet && speaks) {
    std::cout << "source: " << source->describe() << "\n";
    std::cout << "running " << measurements.size() << " measurement(s)";
    if (config.duration_ps > 0)
      std::cout << " for " << config.duration_ps * 1e-12 << " s of stream time";
    if (distributed_run) std::cout << " over " << distributed.size() << " MPI ranks";
    std::cout << std::endl;
    if (distributed_run) printBindingHint(distributed, config.threads);
  }
  Interrupts interrupts([&] { graph.requestStop(); });
  Interrupts::abandon({resultsTemporaryPath(config.output)});
  // A checkpoint of one rank would hold only its share.
  Checkpoints checkpoints(
      distributed_run ? 0 : config.checkpoint_s,
      [&] {
        RunInfo info = runInfoOf(*source, graph, config.text);
        info.checkpoint = true;
        writeResultsHdf5(config.output, nodes.results(), Profile{}, info);
      },
      [&] { graph.requestStop(); });
  // The stream begins: from here on a failed run keeps what its FileWriters recorded.
  recordings.commit();
  const Profile profile = distributed_run
                              ? runShareOfRanks(distributed, config, guarded, graph, measurements)
                              : graph.run(config.duration_ps);
  checkpoints.stop();
  checkpoints.rethrowFailure();
  if (!speaks) return interrupts.interrupted() ? interrupts.exitCode() : 0;
  if (show_progress) std::fprintf(stderr, "\n");

  RunInfo info = runInfoOf(*source, graph, config.text);
  info.interrupted = interrupts.interrupted();
  info.damaged_tail = guarded.damage();
  writeResultsHdf5(config.output, nodes.results(), profile, info);
  if (!options.trace_path.empty()) writeChromeTrace(options.trace_path, profile);

  if (!options.quiet) {
    std::cout << "\nprofile:\n";
    printProfile(std::cout, profile);
    if (!info.source_statistics.entries().empty()) {
      std::cout << "\nsource:";
      for (const auto& [key, value] : info.source_statistics.entries()) {
        std::cout << " " << key << "=" << formatParameter(value);
      }
      std::cout << "\n";
    }
    std::cout << "\nresults written to " << config.output
              << (interrupts.interrupted() ? " (interrupted: they cover the stream time captured)"
                                           : "")
              << "\n";
    if (!options.trace_path.empty()) std::cout << "trace written to " << options.trace_path << "\n";
  }
  const int damaged = guarded.report(config.output);
  return interrupts.interrupted() ? interrupts.exitCode() : damaged;
}

int runCommand(const RunOptions& options) {
  DistributedRun distributed;
  if (distributed.size() == 1) return runOnce(options, distributed);
  try {
    return runOnce(options, distributed);
  } catch (const std::exception& error) {
    std::cerr << "tagflow run, rank " << distributed.rank() << " of " << distributed.size()
              << ": error: " << error.what() << std::endl;
    distributed.abort(1);
  }
}

namespace {

// Breaks every line longer than `width` at its last space that fits; the rest continues on
// lines indented four spaces deeper than the line it came from.
std::string wrapLines(std::string_view text, std::size_t width = 100) {
  std::string out;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    const std::string indent(std::min(line.find_first_not_of(' '), line.size()) + 4, ' ');
    bool first = true;
    while (true) {
      const std::size_t room = first ? width : width - indent.size();
      const std::size_t cut = line.size() <= room ? std::string_view::npos : line.rfind(' ', room);
      if (cut == std::string_view::npos || cut <= indent.size()) {
        out.append(first ? "" : indent).append(line).append("\n");
        break;
      }
      out.append(first ? "" : indent).append(line.substr(0, cut)).append("\n");
      line = line.substr(cut + 1);
      first = false;
    }
  }
  return out;
}

}  // namespace

std::string kindsHelp() {
  std::string out = "Source kinds ([source] kind = ...):\n";
  for (const auto& kind : sourceKinds()) {
    out += fmt::format("  {}: {}\n{}", kind.schema->kind(), kind.schema->summary(),
                       kind.schema->help());
    for (const ParameterSchema* table : kind.tables) {
      out += fmt::format("    {}\n{}", table->summary(), table->help("        "));
    }
  }
  out += fmt::format("  {}\n{}", inputDelaySchema().summary(), inputDelaySchema().help("    "));
  out += "Measurement kinds ([[measurement]] kind = ..., name = ...):\n";
  for (const auto& kind : allMeasurementKinds()) {
    out += fmt::format("  {}: {}\n{}", kind.kind(), kind.schema->summary(), kind.schema->help());
  }
  out +=
      "Virtual channel kinds ([[channel]] kind = ..., name = ...; a channel key of any node may\n"
      "name a virtual channel instead of a number: \"name\", or \"name:i\" for output i):\n";
  for (const auto& kind : virtualChannelKinds()) {
    out += fmt::format("  {}: {}\n{}", kind.kind(), kind.schema->summary(), kind.schema->help());
  }
  out +=
      "A Countrate, Correlation or HistogramLogBins without gates (the kinds whose partial\n"
      "results merge in any order) may add parallel = N: N shards on N cores, results as one\n"
      "pass (docs/parallel.md). mpirun -n N tagflow run splits a recording over N processes.\n"
      "[run] keys: output (default results.h5), duration_ps (stream time to process),\n"
      "      threads (0 = all cores), max_blocks_in_flight (default 8),\n"
      "      checkpoint_s (write the results every this many seconds of wall time; default 0:\n"
      "      at the end only), first_virtual_channel (where virtual channel numbers begin;\n"
      "      default 0: 1000, or above the channels the source lists)\n";
  return wrapLines(out);
}

}  // namespace tagflow::cli
