// Photon-HDF5 export and import (photon-hdf5.org, format version 0.5), for handing a recording
// to other tools. Export writes every TimeTag as /photon_data/timestamps (int64, unit 1 ps in
// /photon_data/timestamps_specs/timestamps_unit) and /photon_data/detectors (int32: the
// channel), the root description and acquisition_duration, the mandatory /setup fields (one
// spot, one spectral, polarization and split channel, no modulation, no lifetime, num_pixels =
// the channels that occur, listed in /setup/detectors/id) and the /identity and /provenance
// fields. What Photon-HDF5 has no place for goes under /user/tagflow: the stream's time range,
// the configuration text, and the overflow, missed-events and error tags with their positions
// in the stream, so that importing an exported file gives back the same stream (the reserved
// byte excepted). Import reads any Photon-HDF5 file whose timestamps unit is a whole number of
// picoseconds; without /user/tagflow its stream runs from the first timestamp to 1 ps after
// the last, and a file without detectors puts every photon on channel 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tagflow/core/source.hpp"

namespace tagflow {

struct PhotonHdf5Export {
  std::string description;    // /description
  std::string original_file;  // /provenance/filename
  std::string configuration;  // /user/tagflow/configuration
};

// Writes the whole stream of `source` to `path`; returns the number of tags read. Throws
// IoError naming the path when the file cannot be written.
std::uint64_t writePhotonHdf5(Source& source, const std::string& path,
                              const PhotonHdf5Export& info);

class PhotonHdf5Source : public Source {
 public:
  // Throws IoError (cannot open) or DataError (not Photon-HDF5, unusable timestamps unit).
  PhotonHdf5Source(std::string path, std::size_t block_size);
  ~PhotonHdf5Source() override;

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return block_size_; }
  std::string describe() const override;

 private:
  struct File;
  // Appends the next stretch of the merged stream (photons and special tags) to lookahead_.
  bool refill();

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
