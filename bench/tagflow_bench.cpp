// tagflow-bench: the per-measurement throughput runner. Generates the 8-channel demo stream
// once in memory, then runs, each as its own graph run: the plain scan (the reference), each
// measurement alone, and the measurements all together on 1 and on N threads. Reports
// medians over several runs: per measurement its capacity (tags / busy time on one core,
// MTags/s) and the ratio to the scan's capacity measured the same way in the same process;
// the graph's wall-clock rates; the synthetic source alone, drained into blocks on one core.
// --scaling sweeps each measurement's parameters instead (scaling_bench.hpp).
// --memory-check runs a graph fed block by block by the synthetic source with a deliberately
// slow measurement at two stream lengths, in child processes, and compares their peak
// resident memory (with Counter, or the --only measurement).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_cases.hpp"
#include "bench_stream.hpp"
#include "channel_bench.hpp"
#include "file_bench.hpp"
#include "link_bench.hpp"
#include "parallel_bench.hpp"
#include "scaling_bench.hpp"
#include "serve_bench.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/tagfile/file_writer.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"
#include "tagflow/measurements/phase_noise.hpp"
#include "vendor_bench.hpp"

namespace tagflow::bench {
namespace {

const std::vector<channel_t> kChannels = {1, 2, 3, 4, 5, 6, 7, 8};
// 20 steps of the 1-2-3-5-7 series: tau from 0.1 ms to 0.2 s at average 1000 on 10 MHz.
const std::vector<std::int64_t> kStabilitySteps = {
    1, 2, 3, 5, 7, 10, 14, 20, 30, 50, 70, 100, 140, 200, 300, 500, 700, 1000, 1400, 2000};

// Where the FileWriter row writes: a file of this process in the disk folder, removed after
// each run.
std::string benchRecordingPath(const std::string& folder) {
  return folder + "/tagflow-bench-" + std::to_string(::getpid()) + ".tags";
}

void removeBenchRecording(const std::string& folder) {
  const std::string path = benchRecordingPath(folder);
  for (std::uint32_t part = 0; std::filesystem::remove(TagFileWriter::partPath(path, part));
       ++part) {
  }
}

std::vector<BenchCase> benchCases(const std::string& disk_folder) {
  return {
      {"Null", "does nothing per tag: the engine's own cost",
       [] { return std::make_unique<NullMeasurement>("Null"); }},
      {"Counter", "8 channels, binwidth 1 ms, n_values 1000",
       [] { return std::make_unique<Counter>("Counter", kChannels, 1'000'000'000, 1000); }},
      {"Countrate", "8 channels",
       [] { return std::make_unique<Countrate>("Countrate", kChannels); }},
      {"Correlation", "channel 2 vs 1 (1 ns partner), window 10 ns in 1000 bins",
       [] { return std::make_unique<Correlation>("Correlation", 2, 1, 10, 1000); }},
      {"HistogramLogBins", "click 2, start 1, 1 ps to 1 us, 1000 bins",
       [] { return std::make_unique<HistogramLogBins>("HistogramLogBins", 2, 1, -12, -6, 1000); }},
      {"FrequencyStability", "channel 3 (10 MHz clock), average 1000, 20 steps",
       [] {
         return std::make_unique<FrequencyStability>("FrequencyStability", 3, kStabilitySteps, 1000,
                                                     1000);
       }},
      {"PhaseNoise", "channel 3 (10 MHz clock), samples_per_octave 512",
       [] { return std::make_unique<PhaseNoise>("PhaseNoise", std::vector<channel_t>{3}, 512); }},
      {"FileWriter", "8 channels to a tag file in " + disk_folder + " (busy time, no fsync)",
       [disk_folder] {
         return std::make_unique<FileWriter>("FileWriter", benchRecordingPath(disk_folder),
                                             kChannels, std::uint64_t{1} << 40);
       }},
  };
}

struct Options {
  std::size_t tags = 100'000'000;
  std::size_t block_size = 16384;
  int threads = 2;
  int runs = 5;
  std::string only;
  std::string json;
  bool memory_check = false;
  std::size_t memory_tags = 100'000'000;
  std::size_t memory_factor = 4;
  std::size_t memory_child = 0;
  std::string disk_folder = "/work";
};

GraphRuns graphRuns(const Options& options) {
  return {options.block_size, options.threads, options.runs,
          [folder = options.disk_folder] { removeBenchRecording(folder); }};
}

double measureTogether(const std::vector<BenchCase>& cases,
                       const std::shared_ptr<const std::vector<Tag>>& stream,
                       const Options& options, int threads) {
  std::vector<double> walls;
  for (int run = 0; run < options.runs; ++run) {
    std::vector<std::unique_ptr<Measurement>> owned;
    std::vector<Measurement*> measurements;
    for (const auto& bench_case : cases) {
      if (bench_case.name == "Null") continue;
      owned.push_back(bench_case.make());
      measurements.push_back(owned.back().get());
    }
    walls.push_back(
        runGraph(stream, options.block_size, threads, measurements).wallMTagsPerSecond());
    owned.clear();
    removeBenchRecording(options.disk_folder);
  }
  return median(walls);
}

// The synthetic source alone with the demo channels, drained into blocks on this thread:
// what `tagflow run` on the demo configuration can be fed at.
double measureSyntheticSource(const Options& options) {
  SyntheticConfig config;
  config.channels = demoChannels();
  config.block_size = options.block_size;
  config.duration_ps = static_cast<timestamp_t>(options.tags / config.totalRateHz() * 1e12) + 1;
  std::vector<double> rates;
  for (int run = 0; run < options.runs; ++run) {
    SyntheticSource source(config);
    BlockBuffer block;
    block.storage.reserve(source.maxBlockTags());
    std::uint64_t tags = 0;
    const auto begin = std::chrono::steady_clock::now();
    while (source.next(block)) tags += block.tags.size();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    rates.push_back(static_cast<double>(tags) / seconds * 1e-6);
  }
  return median(rates);
}

// A measurement slower than the synthetic source, so back-pressure must hold the source.
class SlowMeasurement : public Measurement {
 public:
  SlowMeasurement() : Measurement("Slow", "slow", {}) {}

 protected:
  void processTimeTags(std::span<const Tag> tags) override { seen_ += tags.size(); }
  void advanceTime(timestamp_t) override {
    std::this_thread::sleep_for(std::chrono::microseconds(1000));
  }
  void clearData() override { seen_ = 0; }
  void collectResults(ResultSet&) const override {}

 private:
  std::uint64_t seen_ = 0;
};

long peakRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

int memoryChild(const Options& options) {
  SyntheticConfig config;
  config.channels = demoChannels();
  config.block_size = options.block_size;
  config.duration_ps =
      static_cast<timestamp_t>(options.memory_child / config.totalRateHz() * 1e12) + 1;
  SyntheticSource source(config);
  GraphOptions graph_options;
  graph_options.threads = options.threads;
  MeasurementGraph graph(source, graph_options);
  std::unique_ptr<Measurement> measured;
  for (const auto& bench_case : benchCases(options.disk_folder)) {
    if (bench_case.name == options.only) measured = bench_case.make();
  }
  if (measured) {
    graph.add(*measured);
  } else {
    graph.emplace<Counter>("counter", kChannels, 1'000'000'000, 1000);
  }
  graph.emplace<SlowMeasurement>();
  const Profile profile = graph.run();
  std::cout << profile.tags << " " << peakRssKiB() << std::endl;
  return 0;
}

std::pair<std::uint64_t, long> runMemoryChild(std::size_t tags, const Options& options) {
  // popen runs a shell, in which /proc/self/exe would be the shell: resolve it here.
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) {
    throw std::runtime_error("cannot resolve /proc/self/exe");
  }
  const std::string command = std::string(self) + " --memory-child " + std::to_string(tags) +
                              " --block-size " + std::to_string(options.block_size) +
                              " --threads " + std::to_string(options.threads) +
                              (options.only.empty() ? "" : " --only " + options.only);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot start " + command);
  unsigned long long processed = 0;
  long rss = 0;
  const int fields = std::fscanf(pipe, "%llu %ld", &processed, &rss);
  if (pclose(pipe) != 0 || fields != 2) throw std::runtime_error("memory child failed: " + command);
  return {processed, rss};
}

int memoryCheck(const Options& options) {
  bool known = options.only.empty();
  for (const auto& bench_case : benchCases(options.disk_folder)) {
    known = known || bench_case.name == options.only;
  }
  if (!known) throw std::invalid_argument("--only " + options.only + ": no such measurement");
  std::cout << "memory check: synthetic source block by block, "
            << (options.only.empty() ? "Counter" : options.only)
            << " + a measurement that sleeps 1 ms per block\n";
  const auto [small_tags, small_rss] = runMemoryChild(options.memory_tags, options);
  const auto [large_tags, large_rss] =
      runMemoryChild(options.memory_tags * options.memory_factor, options);
  std::cout << std::setw(14) << small_tags << " tags: peak RSS " << small_rss / 1024.0 << " MiB\n"
            << std::setw(14) << large_tags << " tags: peak RSS " << large_rss / 1024.0 << " MiB\n"
            << "ratio " << std::fixed << std::setprecision(3)
            << static_cast<double>(large_rss) / small_rss << " (flat: within 1.10)\n";
  return 0;
}

void writeJson(const std::string& path, const Options& options, std::size_t tags, double scan,
               double bare_scan, const std::vector<CaseResult>& results, double together_1,
               double together_n, double pair_1, double pair_n) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CaseResult& result : results) {
    rows.push_back({{"name", result.name},
                    {"mtags_per_s", result.capacity},
                    {"ratio_to_scan", result.capacity / scan},
                    {"wall_mtags_per_s", result.wall}});
  }
  // Groups that did not run (--only; their rates are 0) are null.
  nlohmann::json together = nullptr;
  if (together_1 > 0) {
    together = {{"threads", options.threads},
                {"wall_mtags_per_s", together_n},
                {"one_thread_wall_mtags_per_s", together_1}};
  }
  nlohmann::json counter_countrate = nullptr;
  if (pair_1 > 0) {
    counter_countrate = {{"one_thread_wall_mtags_per_s", pair_1}, {"wall_mtags_per_s", pair_n}};
  }
  const nlohmann::json json{{"cpu", cpuModel()},
                            {"tags", tags},
                            {"block_size", options.block_size},
                            {"threads", options.threads},
                            {"runs", options.runs},
                            {"scan_mtags_per_s", scan},
                            {"bare_scan_mtags_per_s", bare_scan},
                            {"results", rows},
                            {"all_together", together},
                            {"counter_countrate", counter_countrate}};
  std::ofstream out(path);
  out << json.dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write " + path);
}

int runBench(const Options& options) {
  std::vector<BenchCase> cases;
  for (auto& bench_case : benchCases(options.disk_folder)) {
    if (options.only.empty() || bench_case.name == options.only) cases.push_back(bench_case);
  }
  if (cases.empty() && options.only != "SyntheticSource") {
    throw std::invalid_argument("--only " + options.only + ": no such measurement");
  }

  const auto stream = makeAnnouncedBenchStream(options.tags);
  const double bare_scan = measureBareScan(*stream, options.runs);
  const CaseResult scan = measureCase(
      {"Scan", "reads every tag", [] { return std::make_unique<ScanMeasurement>("Scan"); }}, stream,
      graphRuns(options));

  std::vector<CaseResult> results;
  for (const auto& bench_case : cases) {
    results.push_back(measureCase(bench_case, stream, graphRuns(options)));
  }
  if (options.only.empty() || options.only == "SyntheticSource") {
    const double synthetic = measureSyntheticSource(options);
    results.push_back({"SyntheticSource", "the demo channels drained into blocks (one core)",
                       synthetic, synthetic});
  }
  // With --only there is no group to run together.
  const bool has_group = cases.size() > 1;
  const double together_1 = has_group ? measureTogether(cases, stream, options, 1) : 0;
  const double together_n =
      has_group ? measureTogether(cases, stream, options, options.threads) : 0;
  // Two measurements of similar cost show what the second core buys; "all together" is
  // bounded by its slowest member instead.
  std::vector<BenchCase> pair;
  for (const auto& bench_case : cases) {
    if (bench_case.name == "Counter" || bench_case.name == "Countrate") pair.push_back(bench_case);
  }
  const bool has_pair = pair.size() == 2;
  const double pair_1 = has_pair ? measureTogether(pair, stream, options, 1) : 0;
  const double pair_n = has_pair ? measureTogether(pair, stream, options, options.threads) : 0;

  std::cout << std::fixed << std::setprecision(1) << "\n"
            << cpuModel() << "; " << stream->size() << " tags, block " << options.block_size
            << " tags, " << options.threads << " threads, medians of " << options.runs << " runs\n"
            << "capacity = tags / busy time of the node (one core); ratio = capacity / scan "
               "capacity\n\n"
            << std::left << std::setw(24) << "measurement" << std::right << std::setw(12)
            << "MTags/s" << std::setw(8) << "ratio" << std::setw(14) << "wall MTags/s"
            << "  setup\n";
  const auto row = [&](const CaseResult& r) {
    std::cout << std::left << std::setw(24) << r.name << std::right << std::setw(12) << r.capacity
              << std::setw(8) << std::setprecision(2) << r.capacity / scan.capacity
              << std::setprecision(1) << std::setw(14) << r.wall << "  " << r.setup << "\n";
  };
  row(scan);
  for (const auto& result : results) row(result);
  std::cout << "\nbare scan outside the engine: " << bare_scan
            << " MTags/s; scan in the graph (wall): " << scan.wall
            << " MTags/s = " << std::setprecision(2) << scan.wall / bare_scan << " of bare\n";
  if (has_group) {
    std::cout << std::setprecision(1) << "all together (all but Null): " << together_1
              << " MTags/s wall on 1 thread, " << together_n << " MTags/s on " << options.threads
              << " threads (x" << std::setprecision(2) << together_n / together_1 << ")\n";
  }
  if (has_pair) {
    std::cout << std::setprecision(1) << "Counter + Countrate: " << pair_1
              << " MTags/s wall on 1 thread, " << pair_n << " MTags/s on " << options.threads
              << " threads (x" << std::setprecision(2) << pair_n / pair_1 << ")\n";
  }
  if (!options.json.empty()) {
    writeJson(options.json, options, stream->size(), scan.capacity, bare_scan, results, together_1,
              together_n, pair_1, pair_n);
    std::cout << "json written to " << options.json << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace tagflow::bench

int main(int argc, char** argv) {
  using namespace tagflow::bench;
  Options options;
  CLI::App app{"tagflow-bench: per-measurement throughput runner"};
  app.add_option("--tags", options.tags, "tags in the in-memory stream")
      ->check(CLI::Range(1000ul, 4'000'000'000ul));
  app.add_option("--block-size", options.block_size, "tags per block")
      ->check(CLI::Range(1ul, 1ul << 26));
  app.add_option("--threads", options.threads, "threads of the graph")->check(CLI::Range(1, 1024));
  app.add_option("--runs", options.runs, "runs per figure (the median is reported)")
      ->check(CLI::Range(1, 100));
  app.add_option(
      "--only", options.only,
      "benchmark only this measurement (--vendor: the formats whose name begins with it)");
  app.add_option("--json", options.json, "also write the figures as JSON");
  bool channels = false;
  app.add_flag("--channels", channels,
               "benchmark the virtual channels and a composed graph instead (--only: prefix)");
  bool scaling = false;
  app.add_flag("--scaling", scaling,
               "how each cost follows its parameters instead: Counter binwidth, Correlation bins "
               "and window, HistogramLogBins, the raw file source (--only: family prefix)");
  bool files = false;
  app.add_flag("--files", files,
               "benchmark tag files instead: packing, decoding, FileWriter to /dev/shm and disk");
  app.add_option("--disk-folder", options.disk_folder,
                 "folder on the disk the FileWriter row (and --files, --vendor) writes to")
      ->check(CLI::ExistingDirectory);
  bool link = false;
  app.add_flag("--link", link,
               "benchmark the UDP stream link's decoding and encoding on one core instead "
               "(network rates: tagflow linktest)");
  bool vendor = false;
  app.add_flag("--vendor", vendor,
               "benchmark the vendor file readers (PTU, legacy PicoQuant, B&H SPC, quTAG) on one "
               "core instead, and their memory on a file over 4 GiB");
  bool serve = false;
  int parallel = 0;
  app.add_option("--parallel", parallel,
                 "compare each splittable measurement as one node and as this many shards")
      ->check(CLI::Range(1, 256));
  app.add_flag("--serve", serve,
               "measure what the live view (tagflow serve) with one page costs the graph");
  std::string vendor_memory_child;
  app.add_option("--vendor-memory-child", vendor_memory_child)->group("");
  app.add_flag("--memory-check", options.memory_check,
               "compare peak RSS of a synthetic-source run at --memory-tags and --memory-factor "
               "times that (Counter, or the --only measurement)");
  app.add_option("--memory-tags", options.memory_tags, "tags of the shorter memory-check run");
  app.add_option("--memory-factor", options.memory_factor,
                 "length of the longer memory-check run over the shorter, default 4")
      ->check(CLI::Range(2ul, 1000ul));
  app.add_option("--memory-child", options.memory_child)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  try {
    if (options.memory_child > 0) return memoryChild(options);
    if (options.memory_check) return memoryCheck(options);
    if (scaling) {
      return runScalingBench({options.tags, options.block_size, options.threads, options.runs,
                              options.only, options.disk_folder, options.json});
    }
    if (files) return runFileBench({options.tags, options.runs, options.disk_folder, options.json});
    if (!vendor_memory_child.empty()) {
      return vendorMemoryChild(vendor_memory_child, options.block_size);
    }
    if (vendor) {
      return runVendorBench({options.tags, options.block_size, options.runs, options.json,
                             options.disk_folder, options.only});
    }
    if (serve) {
      return runServeBench(
          {options.tags, options.block_size, options.threads, options.runs, 10, options.json});
    }
    if (parallel > 0) {
      return runParallelBench({options.tags, options.block_size,
                               std::max(options.threads, parallel), options.runs, parallel,
                               options.json});
    }
    if (link) return runLinkBench({options.tags, options.block_size, options.runs, options.json});
    if (channels) {
      return runChannelBench(
          {options.tags, options.block_size, options.threads, options.runs, options.only});
    }
    return runBench(options);
  } catch (const std::exception& error) {
    std::cerr << "tagflow-bench: error: " << error.what() << "\n";
    return 1;
  }
}
