// The processes of a distributed `tagflow run` (mpirun -n N tagflow run CONFIG): each rank
// runs the graph over its share of the recording's time range and sends its partial states to
// rank 0, which merges them and writes the one results file (docs/parallel.md). Built on MPI
// when CMake found it (distributed_mpi.cpp); otherwise (distributed_single.cpp) a process is
// always rank 0 of 1 and nothing here talks to anyone.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tagflow::cli {

class DistributedRun {
 public:
  // Joins the job when mpirun started this process (its environment says so); a process
  // started alone is rank 0 of 1 and does not touch MPI.
  DistributedRun();
  ~DistributedRun();
  DistributedRun(const DistributedRun&) = delete;
  DistributedRun& operator=(const DistributedRun&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The ranks on this machine (mpirun says so; the job's size when it does not).
  int localSize() const { return local_size_; }
  // Rank 0 receives every rank's bytes, in rank order; the other ranks get nothing back.
  std::vector<std::vector<std::uint8_t>> gatherAtRoot(std::span<const std::uint8_t> bytes) const;
  // Ends the processes of every rank: an error on one must not leave the others waiting.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_size_ = 1;
  bool joined_ = false;
};

}  // namespace tagflow::cli
