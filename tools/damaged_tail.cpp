#include "damaged_tail.hpp"

#include <iostream>

#include "tagflow/io/truncated_data.hpp"

namespace tagflow::cli {

bool DamagedTailGuard::next(BlockBuffer& out) {
  if (!damage_.empty()) return false;
  try {
    return source_.next(out);
  } catch (const TruncatedData& error) {
    damage_ = error.what();
    return false;
  }
}

int DamagedTailGuard::report(const std::string& kept_in) const {
  if (damage_.empty()) return 0;
  std::cerr << "tagflow: damaged tail: " << damage_ << "; everything before it is in " << kept_in
            << "\n";
  return kDamagedTailExit;
}

}  // namespace tagflow::cli
