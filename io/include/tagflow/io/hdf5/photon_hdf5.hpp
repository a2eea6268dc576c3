// Photon-HDF5 export and import (photon-hdf5.org, format version 0.5), for handing a recording
// to other tools.
//
// Export writes a file the format's reference validator (phconvert) accepts: every official
// field it writes carries the description of the spec's field list as its TITLE attribute, and
// nothing unofficial lies outside /user. Every TimeTag goes to /photon_data/timestamps (int64,
// 1 ps) and /photon_data/detectors (int32: the channel, negative for falling edges); /setup
// describes one spot, spectral, polarization and split channel, one CW excitation source, no
// alternation and no lifetime, and lists every channel that occurs in /setup/detectors/id;
// measurement_specs says "generic". What Photon-HDF5 has no place for goes under /user/tagflow:
// the stream's time range, the configuration text, and the overflow, missed-events and error
// tags with their positions in the stream, so that importing an export gives back the same
// stream (the reserved byte excepted). The photon arrays are shuffled and deflated (gzip, which
// every HDF5 reader has) in chunks that grow with the export up to 65536 entries. The file is
// written under a temporary name and renamed when complete: a failed export leaves no file.
//
// Import reads one photon_data group. T2 files (no nanotimes): timestamps * timestamps_unit,
// which must be a whole number of picoseconds; detector d is channel d (channel 0 for a file
// without detectors). T3 files (nanotimes): like T3 PTU files, one sync tag on channel 100 at
// timestamp * timestamps_unit for every sync period holding a photon, and each photon at
// timestamp * timestamps_unit + nanotime * nanotimes_specs/tcspc_unit, both rounded to the
// nearest ps. Without /user/tagflow the stream runs from the first tag to 1 ps after the last.
// Compressed arrays are read through HDF5's filters and plugins (HDF5_PLUGIN_PATH, the build's
// default folder, and Debian's plugin folder); a filter that is not available is named before
// anything is read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tagflow/core/source.hpp"

namespace tagflow {

struct PhotonHdf5Export {
  std::string description;    // /description
  std::string original_file;  // /provenance/filename (none when empty)
  std::string configuration;  // /user/tagflow/configuration
};

// Writes the whole stream of `source` to `path`; returns the number of tags read. Throws
// IoError naming the path when the file cannot be written, and passes on the source's errors;
// either way no file is left at `path` (an existing one stays as it was) nor beside it.
std::uint64_t writePhotonHdf5(Source& source, const std::string& path,
                              const PhotonHdf5Export& info);

// The synchronisation channel of imported T3 files, as for T3 PTU files.
inline constexpr channel_t kPhotonHdf5SyncChannel = 100;

class PhotonHdf5Source : public Source {
 public:
  // Throws IoError (cannot open) or DataError (not Photon-HDF5, an unusable unit, an array
  // compressed with a filter that is not available).
  PhotonHdf5Source(std::string path, std::size_t block_size);
  ~PhotonHdf5Source() override;

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return block_size_; }
  std::string describe() const override;

 private:
  struct File;
  // Reads the next stretch of photons and appends what is final of the merged stream
  // (photons, sync tags, special tags) to lookahead_.
  void refill();
  void refillT2();
  void refillT3();
  bool exhausted() const;

  std::string path_;
  std::size_t block_size_;
  std::unique_ptr<File> file_;
  std::vector<Tag> lookahead_;
  std::size_t position_ = 0;
  bool started_ = false;
  timestamp_t next_begin_ = 0;
  timestamp_t last_time_ = 0;
};

}  // namespace tagflow
