// Result sets and profiles as bytes, to send partial states between processes (the ranks of
// an MPI run, or any other scheduler that runs time ranges on several machines) and merge them
// there. Little-endian, every string and array length-prefixed; the bytes are for the same
// tagflow version on both ends, not an archive format (results files are HDF5). Decoding
// checks every length against what is left and throws DataError on malformed input.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tagflow/core/profile.hpp"
#include "tagflow/core/result_set.hpp"

namespace tagflow {

std::vector<std::uint8_t> encodeResultSets(const std::vector<ResultSet>& results);
std::vector<ResultSet> decodeResultSets(std::span<const std::uint8_t> bytes);

// Without the trace spans.
std::vector<std::uint8_t> encodeProfile(const Profile& profile);
Profile decodeProfile(std::span<const std::uint8_t> bytes);

}  // namespace tagflow
