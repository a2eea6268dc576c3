// withContext: runs `build` and prefixes the message of an InvalidArgument it throws with
// `context` (which part of the configuration was being built), keeping the exception type so
// the exit code stays that of a configuration error.
#pragma once

#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow::cli {

template <typename Build>
auto withContext(const std::string& context, Build build) {
  try {
    return build();
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(context + ": " + error.what());
  }
}

}  // namespace tagflow::cli
