// Without MPI: every process runs alone.
#include <cstdlib>

#include "distributed_run.hpp"

namespace tagflow::cli {

DistributedRun::DistributedRun() = default;

DistributedRun::~DistributedRun() = default;

std::vector<std::vector<std::uint8_t>> DistributedRun::gatherAtRoot(
    std::span<const std::uint8_t> bytes) const {
  return {std::vector<std::uint8_t>(bytes.begin(), bytes.end())};
}

void DistributedRun::abort(int code) const {
  std::exit(code);
}

}  // namespace tagflow::cli
