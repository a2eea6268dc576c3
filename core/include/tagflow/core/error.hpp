// Exceptions of the library. Messages name the offending value and, where one exists, the
// valid range, so that a user can fix the input without reading the code.
#pragma once

#include <stdexcept>
#include <string>

namespace tagflow {

// A parameter or configuration value outside its valid range.
class InvalidArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A value of the wrong type for its key (a text where a number belongs); still an
// InvalidArgument, so that callers who do not tell the two apart need not change.
class InvalidType : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// Input data that violates the stream contract (unsorted, truncated, corrupt).
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The operating system refused an operation (open, write, rename).
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tagflow
