// The benchmark stream and the reference loads shared by tagflow-bench and the Google
// Benchmark micro-benchmarks: the 8-channel demo stream generated once into memory, a plain
// scan (reads every tag, the reference every ratio is taken against) and a measurement that
// does nothing per tag (what the engine costs by itself).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/core/tag.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"

namespace tagflow::bench {

// `count` tags of the demo stream (io/source_registry.cpp demoChannels), seed 1.
std::shared_ptr<const std::vector<Tag>> makeBenchStream(std::size_t count);
// makeBenchStream, saying on standard output what is being generated (it takes seconds).
std::shared_ptr<const std::vector<Tag>> makeAnnouncedBenchStream(std::size_t count);
// `count` tags of the demo stream with channel 1's falling edge (channel -1) 3 ns after each
// rising one: pulses for ConstantFractionDiscriminator.
std::shared_ptr<const std::vector<Tag>> makePulseStream(std::size_t count);
// `count` tags of a synthetic stream of `channels`, seed 1.
std::shared_ptr<const std::vector<Tag>> makeSyntheticStream(std::size_t count,
                                                            std::vector<SyntheticChannel> channels);

// The processor's model name (/proc/cpuinfo), which every figure names.
std::string cpuModel();

// The median of a figure's runs (the machine is shared: one run says little).
double median(std::vector<double> values);

// The median rate of `runs` plain scans of `stream`, MTags/s: the reference of every ratio.
double measureBareScan(std::span<const Tag> stream, int runs);

// Sums channel and time of every tag, so the loop cannot be optimised away.
std::uint64_t plainScan(std::span<const Tag> tags);

class ScanMeasurement : public Measurement {
 public:
  explicit ScanMeasurement(std::string name) : Measurement("Scan", std::move(name), {}) {}
  std::uint64_t checksum() const { return checksum_; }

 protected:
  void processTimeTags(std::span<const Tag> tags) override { checksum_ += plainScan(tags); }
  void clearData() override { checksum_ = 0; }
  void collectResults(ResultSet&) const override {}

 private:
  std::uint64_t checksum_ = 0;
};

class NullMeasurement : public Measurement {
 public:
  explicit NullMeasurement(std::string name) : Measurement("Null", std::move(name), {}) {}

 protected:
  void processTimeTags(std::span<const Tag>) override {}
  void clearData() override {}
  void collectResults(ResultSet&) const override {}
};

}  // namespace tagflow::bench
