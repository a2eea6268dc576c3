#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "distributed_run.hpp"

namespace tagflow::cli {

namespace {

// mpirun (Open MPI, or any launcher speaking PMI/PMIx) tells its processes who they are.
bool startedByMpirun() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) throw std::runtime_error(std::string(call) + " failed");
}

}  // namespace

DistributedRun::DistributedRun() {
  if (!startedByMpirun()) return;
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  joined_ = true;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  local_size_ = local != nullptr ? std::max(1, std::atoi(local)) : size_;
}

DistributedRun::~DistributedRun() {
  if (joined_) MPI_Finalize();
}

std::vector<std::vector<std::uint8_t>> DistributedRun::gatherAtRoot(
    std::span<const std::uint8_t> bytes) const {
  if (!joined_) return {std::vector<std::uint8_t>(bytes.begin(), bytes.end())};
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::runtime_error("a rank's partial results of " + std::to_string(bytes.size()) +
                             " bytes exceed what one MPI message carries (2 GiB)");
  }
  const int size = static_cast<int>(bytes.size());
  std::vector<int> sizes(static_cast<std::size_t>(size_));
  check(MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<int> offsets(sizes.size(), 0);
  std::vector<std::uint8_t> all;
  if (rank_ == 0) {
    std::size_t total = 0;
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      if (total > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        throw std::runtime_error("the ranks' partial results exceed 2 GiB in all");
      }
      offsets[r] = static_cast<int>(total);
      total += static_cast<std::size_t>(sizes[r]);
    }
    all.resize(total);
  }
  check(MPI_Gatherv(bytes.data(), size, MPI_BYTE, all.data(), sizes.data(), offsets.data(),
                    MPI_BYTE, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::vector<std::uint8_t>> per_rank;
  if (rank_ != 0) return per_rank;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    const auto begin = all.begin() + offsets[r];
    per_rank.emplace_back(begin, begin + sizes[r]);
  }
  return per_rank;
}

void DistributedRun::abort(int code) const {
  if (joined_) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace tagflow::cli
