#include <atomic>
#include <iostream>

#include "commands.hpp"
#include "interrupts.hpp"
#include "run_config.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/raw_file.hpp"

namespace tagflow::cli {

int recordCommand(const std::string& config_path, const std::string& output) {
  const RunConfig config = loadRunConfig(config_path, false);
  std::unique_ptr<Source> source = makeSource(config.source);
  if (config.duration_ps < 0 && config.source.kind == "synthetic" &&
      !config.source.parameters.contains("duration_ps")) {
    throw InvalidArgument(
        "recording an endless synthetic source needs [run] duration_ps or "
        "[source] duration_ps");
  }
  RawFileWriter writer(output);
  std::atomic<bool> stop{false};
  Interrupts interrupts([&] { stop.store(true); });
  Interrupts::abandon(output);
  BlockBuffer block;
  block.storage.reserve(source->maxBlockTags());
  std::uint64_t tags = 0;
  bool first = true;
  timestamp_t start = 0;
  while (!stop.load() && source->next(block)) {
    if (first) start = block.begin_time;
    first = false;
    auto span = block.tags;
    const bool last = config.duration_ps > 0 && block.end_time - start >= config.duration_ps;
    if (last) {
      std::size_t keep = 0;
      while (keep < span.size() && span[keep].time < start + config.duration_ps) ++keep;
      span = span.first(keep);
    }
    writer.write(span);
    tags += span.size();
    if (last) break;
  }
  writer.close();
  std::cout << "recorded " << tags << " tags (" << writer.bytesWritten() << " bytes) to " << output
            << (interrupts.interrupted() ? " (interrupted)" : "") << "\n";
  return interrupts.exitCode();
}

}  // namespace tagflow::cli
