#include "scaling_bench.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "bench_cases.hpp"
#include "bench_stream.hpp"
#include "json_file.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/raw_file.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

namespace tagflow::bench {
namespace {

const std::vector<channel_t> kChannels = {1, 2, 3, 4, 5, 6, 7, 8};

struct Family {
  std::string name;
  std::string why;  // what the work per tag does as the parameter changes
  std::vector<BenchCase> cases;
};

std::vector<Family> families() {
  std::vector<Family> result;
  Family counter{"Counter binwidth",
                 "below about 14 ns (the stream's mean gap) nearly every tag ends a bin, whose "
                 "row of 8 channels is written: work per tag, not per empty bin",
                 {}};
  for (const auto& [label, binwidth] :
       {std::pair{"1 ms", 1'000'000'000}, std::pair{"100 ns", 100'000}, std::pair{"10 ns", 10'000},
        std::pair{"1 ns", 1'000}}) {
    counter.cases.push_back(
        {std::string("Counter ") + label,
         std::string("8 channels, binwidth ") + label + ", n_values 1000", [binwidth = binwidth] {
           return std::make_unique<Counter>("Counter", kChannels, binwidth, 1000);
         }});
  }
  result.push_back(std::move(counter));

  Family bins{"Correlation n_bins",
              "1 ps bins: the window, and with it the pairs per event, grows with n_bins "
              "(0.02, 3, 21 partners); the histogram outgrows the caches (8 KB, 800 KB, 8 MB)",
              {}};
  for (const std::int64_t n_bins : {1'000, 100'000, 1'000'000}) {
    bins.cases.push_back(
        {"Correlation 1 ps x " + std::to_string(n_bins),
         "channel 2 vs 1, binwidth 1 ps, " + std::to_string(n_bins) + " bins",
         [n_bins] { return std::make_unique<Correlation>("Correlation", 2, 1, 1, n_bins); }});
  }
  result.push_back(std::move(bins));

  Family window{"Correlation window",
                "1000 bins: the partners per event grow with the window (1.2 at 10 ns, 3 at "
                "100 ns, 21 at 1 us)",
                {}};
  for (const auto& [label, width] : {std::pair{"10 ns", 10'000}, std::pair{"1 ns", 1'000},
                                     std::pair{"100 ns", 100'000}, std::pair{"1 us", 1'000'000}}) {
    window.cases.push_back(
        {std::string("Correlation ") + label,
         std::string("channel 2 vs 1, window ") + label + " in 1000 bins", [width = width] {
           return std::make_unique<Correlation>("Correlation", 2, 1, width / 1000, 1000);
         }});
  }
  result.push_back(std::move(window));

  Family log_bins{"HistogramLogBins",
                  "the cost is the pairs: about 20 starts of channel 1 (20 MHz) per click "
                  "within 1 us, one of channel 4 (1 MHz); 100000 bins outgrow the caches "
                  "(42911 bins after equal edges merge: 343 KB of counts, 1.3 MB of look-up table)",
                  {}};
  for (const auto& [label, start, n_bins] :
       {std::tuple{"1000 bins", 1, 1000}, std::tuple{"100 bins", 1, 100},
        std::tuple{"100000 bins", 1, 100000}, std::tuple{"1 MHz start", 4, 1000}}) {
    log_bins.cases.push_back({std::string("HistogramLogBins ") + label,
                              "click 2, start " + std::to_string(start) + ", 1 ps to 1 us, " +
                                  std::to_string(n_bins) + " bins",
                              [start = start, n_bins = n_bins] {
                                return std::make_unique<HistogramLogBins>("HistogramLogBins", 2,
                                                                          start, -12, -6, n_bins);
                              }});
  }
  result.push_back(std::move(log_bins));
  return result;
}

struct RawFileFigures {
  double source = 0;  // MTags/s, the source drained alone on this thread
  double graph = 0;   // MTags/s wall, a graph with one Countrate fed by the source
};

// Writes the stream to a raw file a block at a time, as `tagflow record` does (so that the
// figure is that of a recorded file: how a file was written shapes its pages in the page
// cache, and on some virtual machines the cost of reading it), reads it once
// (so that it is in the page cache), then times the source alone and a graph with one
// Countrate.
RawFileFigures measureRawFile(const std::vector<Tag>& stream, const ScalingBenchOptions& options) {
  const std::string path =
      options.disk_folder + "/tagflow-bench-" + std::to_string(::getpid()) + ".raw";
  {
    RawFileWriter writer(path);
    const std::span<const Tag> tags(stream);
    for (std::size_t at = 0; at < tags.size(); at += options.block_size) {
      writer.write(tags.subspan(at, std::min(options.block_size, tags.size() - at)));
    }
    writer.close();
  }
  const auto drain = [&] {
    RawFileSource source(path, options.block_size);
    BlockBuffer block;
    std::uint64_t tags = 0;
    const auto begin = std::chrono::steady_clock::now();
    while (source.next(block)) tags += block.tags.size();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return static_cast<double>(tags) / seconds * 1e-6;
  };
  drain();
  std::vector<double> sources, graphs;
  for (int run = 0; run < options.runs; ++run) {
    sources.push_back(drain());
    RawFileSource source(path, options.block_size);
    GraphOptions graph_options;
    graph_options.threads = options.threads;
    MeasurementGraph graph(source, graph_options);
    Countrate countrate("Countrate", kChannels);
    graph.add(countrate);
    graphs.push_back(graph.run().wallMTagsPerSecond());
  }
  std::filesystem::remove(path);
  return {median(sources), median(graphs)};
}

}  // namespace

int runScalingBench(const ScalingBenchOptions& options) {
  std::vector<Family> chosen;
  for (Family& family : families()) {
    if (family.name.starts_with(options.only)) chosen.push_back(std::move(family));
  }
  const bool raw_file = std::string("RawFileSource").starts_with(options.only);
  if (chosen.empty() && !raw_file) {
    throw std::invalid_argument("--only " + options.only + ": no such family");
  }
  const auto stream = makeAnnouncedBenchStream(options.tags);
  const GraphRuns runs{options.block_size, options.threads, options.runs, {}};
  const CaseResult scan = measureCase(
      {"Scan", "reads every tag", [] { return std::make_unique<ScanMeasurement>("Scan"); }}, stream,
      runs);

  std::cout << std::fixed << "\n"
            << cpuModel() << "; " << stream->size() << " tags, block " << options.block_size
            << " tags, medians of " << options.runs << " runs; scan " << std::setprecision(1)
            << scan.capacity
            << " MTags/s\ncapacity = tags / busy time of the node (one core); vs scan, vs the "
               "family's first row\n";
  nlohmann::json json_families = nlohmann::json::array();
  for (const Family& family : chosen) {
    std::cout << "\n" << family.name << ": " << family.why << "\n";
    std::vector<CaseResult> results;
    for (const BenchCase& bench_case : family.cases) {
      results.push_back(measureCase(bench_case, stream, runs));
    }
    nlohmann::json rows = nlohmann::json::array();
    for (const CaseResult& r : results) {
      const double to_reference = r.capacity / results.front().capacity;
      std::cout << "  " << std::left << std::setw(34) << r.name << std::right << std::setw(10)
                << std::setprecision(1) << r.capacity << std::setw(8) << std::setprecision(2)
                << r.capacity / scan.capacity << std::setw(8) << to_reference << "  " << r.setup
                << "\n";
      rows.push_back({{"name", r.name},
                      {"mtags_per_s", r.capacity},
                      {"ratio_to_scan", r.capacity / scan.capacity},
                      {"ratio_to_first", to_reference}});
    }
    json_families.push_back({{"family", family.name}, {"why", family.why}, {"rows", rows}});
  }
  nlohmann::json raw_json;
  if (raw_file) {
    const RawFileFigures raw = measureRawFile(*stream, options);
    std::cout << std::setprecision(1) << "\nRawFileSource (page cache): " << raw.source
              << " MTags/s alone on one core, " << raw.graph
              << " MTags/s wall feeding a graph with one Countrate\n";
    raw_json = {{"source_mtags_per_s", raw.source}, {"graph_wall_mtags_per_s", raw.graph}};
  }
  if (!options.json.empty()) {
    const nlohmann::json json{{"cpu", cpuModel()},
                              {"tags", stream->size()},
                              {"block_size", options.block_size},
                              {"runs", options.runs},
                              {"scan_mtags_per_s", scan.capacity},
                              {"families", json_families},
                              {"raw_file", raw_json}};
    writeJsonFile(options.json, json);
  }
  return 0;
}

}  // namespace tagflow::bench
