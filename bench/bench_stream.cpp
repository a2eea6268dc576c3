#include "bench_stream.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"

namespace tagflow::bench {

std::shared_ptr<const std::vector<Tag>> makeBenchStream(std::size_t count) {
  return makeSyntheticStream(count, demoChannels());
}

std::shared_ptr<const std::vector<Tag>> makePulseStream(std::size_t count) {
  auto channels = demoChannels();
  SyntheticChannel falling;
  falling.kind = SyntheticChannel::Kind::Partner;
  falling.channel = -1;
  falling.partner_of = 1;
  falling.delay_ps = 3000;
  falling.jitter_ps = 50;
  channels.push_back(falling);
  return makeSyntheticStream(count, std::move(channels));
}

std::shared_ptr<const std::vector<Tag>> makeSyntheticStream(
    std::size_t count, std::vector<SyntheticChannel> channels) {
  SyntheticConfig config;
  config.channels = std::move(channels);
  config.seed = 1;
  config.block_size = 1 << 16;
  SyntheticSource source(config);
  auto tags = std::make_shared<std::vector<Tag>>();
  tags->reserve(count);
  BlockBuffer block;
  while (tags->size() < count && source.next(block)) {
    const std::size_t take = std::min(block.tags.size(), count - tags->size());
    tags->insert(tags->end(), block.tags.begin(),
                 block.tags.begin() + static_cast<std::ptrdiff_t>(take));
  }
  return tags;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("model name")) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::shared_ptr<const std::vector<Tag>> makeAnnouncedBenchStream(std::size_t count) {
  std::cout << "generating " << count << " tags of the 8-channel demo stream..." << std::flush;
  auto stream = makeBenchStream(count);
  std::cout << " done\n";
  return stream;
}

double measureBareScan(std::span<const Tag> stream, int runs) {
  std::vector<double> rates;
  std::uint64_t checksum = 0;
  for (int run = 0; run < runs; ++run) {
    const auto begin = std::chrono::steady_clock::now();
    checksum += plainScan(stream);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    rates.push_back(static_cast<double>(stream.size()) / seconds * 1e-6);
  }
  if (checksum == 42) std::cout << "";  // keeps the scan observable
  return median(rates);
}

std::uint64_t plainScan(std::span<const Tag> tags) {
  // Prefetches like the measurement loops do, so the reference is the best plain loop, not a
  // handicapped one that would flatter every ratio.
  std::uint64_t sum = 0;
  const Tag* tag = tags.data();
  const Tag* const end = tag + tags.size();
  for (; end - tag >= 4; tag += 4) {
    prefetchAhead(tag);
    for (int i = 0; i < 4; ++i) {
      sum += static_cast<std::uint64_t>(tag[i].time) + static_cast<std::uint32_t>(tag[i].channel);
    }
  }
  for (; tag != end; ++tag) {
    sum += static_cast<std::uint64_t>(tag->time) + static_cast<std::uint32_t>(tag->channel);
  }
  return sum;
}

}  // namespace tagflow::bench
