#include "parallel_bench.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "bench_stream.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/sharded_measurement.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

namespace tagflow::bench {
namespace {

struct ParallelCase {
  std::string name;
  std::string setup;
  ShardedMeasurement::Factory make;
};

std::vector<ParallelCase> parallelCases() {
  return {
      {"HistogramLogBins", "click 2, start 1 (20 MHz), 1 ps to 1 us, 1000 bins",
       [] { return std::make_unique<HistogramLogBins>("HistogramLogBins", 2, 1, -12, -6, 1000); }},
      {"Correlation 1 us", "channel 2 vs 1, window 1 us in 1000 bins",
       [] { return std::make_unique<Correlation>("Correlation", 2, 1, 1000, 1000); }},
      {"Correlation 10 ns", "channel 2 vs 1, window 10 ns in 1000 bins",
       [] { return std::make_unique<Correlation>("Correlation", 2, 1, 10, 1000); }},
      {"Countrate", "8 channels",
       [] {
         return std::make_unique<Countrate>("Countrate",
                                            std::vector<channel_t>{1, 2, 3, 4, 5, 6, 7, 8});
       }},
  };
}

double wallRate(const std::shared_ptr<const std::vector<Tag>>& stream,
                const ParallelBenchOptions& options,
                const std::function<void(MeasurementGraph&)>& add) {
  MemorySource source(stream, options.block_size);
  MeasurementGraph graph(source, GraphOptions{.threads = std::max(options.threads, 1)});
  add(graph);
  return graph.run().wallMTagsPerSecond();
}

struct Row {
  std::string name, setup;
  double one = 0, sharded = 0;
};

}  // namespace

int runParallelBench(const ParallelBenchOptions& options) {
  if (options.shards < 1 || options.shards > ShardedMeasurement::kMaxShards) {
    throw std::invalid_argument("--parallel " + std::to_string(options.shards) +
                                " is invalid (valid: 1 to " +
                                std::to_string(ShardedMeasurement::kMaxShards) + ")");
  }
  const auto stream = makeBenchStream(options.tags);
  const double scan = measureBareScan(*stream, options.runs);

  std::vector<Row> rows;
  for (const ParallelCase& bench_case : parallelCases()) {
    std::vector<double> one, sharded;
    // Alternating the two ways spreads the machine's drifts over both.
    for (int run = 0; run < options.runs; ++run) {
      // One shard has no plan: the measurement runs as one node, as without sharding.
      one.push_back(wallRate(stream, options, [&](MeasurementGraph& graph) {
        graph.emplace<ShardedMeasurement>(bench_case.make, 1);
      }));
      sharded.push_back(wallRate(stream, options, [&](MeasurementGraph& graph) {
        graph.emplace<ShardedMeasurement>(bench_case.make, options.shards);
      }));
    }
    rows.push_back({bench_case.name, bench_case.setup, median(one), median(sharded)});
  }

  std::cout << "tagflow-bench --parallel " << options.shards << ": " << stream->size()
            << " tags of the demo stream, blocks of " << options.block_size << ", "
            << options.threads << " threads, median of " << options.runs << " runs\n"
            << "plain scan: " << std::fixed << std::setprecision(1) << scan << " MTags/s\n\n"
            << std::left << std::setw(20) << "measurement" << std::right << std::setw(14)
            << "parallel 1" << std::setw(14) << ("parallel " + std::to_string(options.shards))
            << std::setw(9) << "ratio" << std::setw(12) << "/ scan"
            << "   setup\n";
  nlohmann::json json_rows = nlohmann::json::array();
  for (const Row& row : rows) {
    std::cout << std::left << std::setw(20) << row.name << std::right << std::setw(14) << row.one
              << std::setw(14) << row.sharded << std::setw(8) << std::setprecision(2)
              << row.sharded / row.one << "x" << std::setw(12) << std::setprecision(3)
              << row.sharded / scan << "   " << row.setup << "\n"
              << std::setprecision(1);
    json_rows.push_back({{"name", row.name},
                         {"setup", row.setup},
                         {"wall_mtags_per_s_parallel_1", row.one},
                         {"wall_mtags_per_s_sharded", row.sharded},
                         {"ratio", row.sharded / row.one}});
  }
  std::cout << "(MTags/s wall clock of the whole graph, source included)\n";
  if (!options.json.empty()) {
    std::ofstream out(options.json);
    out << nlohmann::json{{"shards", options.shards},
                          {"threads", options.threads},
                          {"tags", stream->size()},
                          {"scan_mtags_per_s", scan},
                          {"results", json_rows}}
               .dump(2)
        << "\n";
    if (!out) throw std::runtime_error("cannot write " + options.json);
  }
  return 0;
}

}  // namespace tagflow::bench
