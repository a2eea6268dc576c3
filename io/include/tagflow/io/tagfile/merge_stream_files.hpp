// mergeStreamFiles: writes the recordings of several time taggers as one tag file set, each
// input's channels and times shifted by its offsets (MergedSource says how the streams
// combine: in time order, overflow intervals united, with overlap_only only the common span).
// The output is split like FileWriter's (max_file_size) and stores each input's name, offsets
// and configuration; the inputs' markers are not carried over. Neither the output nor a later
// part of its set that exists may be a file an input is read from (the input or a part it is
// read on into, partsReadAfter). Errors name the input or the value and its valid range:
// InvalidArgument for offsets lists of another length than the inputs' (an empty list means
// all zero), an output among the inputs' files or a bad size; IoError and DataError from
// reading and writing, after which the parts written are removed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tagflow/io/tagfile/writer.hpp"

namespace tagflow {

struct MergedFilesSummary {
  std::uint64_t tags = 0;   // written
  std::uint64_t bytes = 0;  // in all parts
  timestamp_t begin = 0;    // the merged stream's span
  timestamp_t end = 0;
};

MergedFilesSummary mergeStreamFiles(const std::string& output,
                                    const std::vector<std::string>& inputs,
                                    const std::vector<channel_t>& channel_offsets = {},
                                    const std::vector<timestamp_t>& time_offsets = {},
                                    bool overlap_only = false,
                                    std::uint64_t max_file_size = kDefaultMaxFileSize,
                                    tagfile::Compression compression = tagfile::Compression::None);

}  // namespace tagflow
