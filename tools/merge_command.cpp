#include <iostream>

#include "commands.hpp"
#include "output_guard.hpp"
#include "path_plan.hpp"
#include "tagflow/io/tagfile/merge_stream_files.hpp"

namespace tagflow::cli {

int mergeCommand(const MergeOptions& options) {
  PathPlan paths;
  for (const std::string& input : options.inputs) paths.readsTagFileSet(input, "an input");
  paths.writesTagFileSet(options.output, "the output");
  paths.check();
  const OutputGuard guard(options.output, true);
  const MergedFilesSummary summary = mergeStreamFiles(
      options.output, options.inputs, options.channel_offsets, options.time_offsets,
      options.overlap_only, options.max_file_size.value_or(kDefaultMaxFileSize),
      tagfile::compressionFromName(options.compression.value_or("none")));
  if (!options.quiet) {
    std::cout << "merged " << options.inputs.size() << " recordings into " << options.output << ": "
              << summary.tags << " tags over [" << summary.begin << ", " << summary.end << ") ps, "
              << summary.bytes << " bytes\n";
  }
  return 0;
}

}  // namespace tagflow::cli
