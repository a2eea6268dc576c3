// The HDF5 helpers the results writer and the Photon-HDF5 import and export share: an owning
// identifier, the error check, and the file and memory types of the numbers tagflow stores.
// Internal to the io library (not installed). Every failure is an IoError naming what could
// not be done and HDF5's reason.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "tagflow/core/error.hpp"

namespace tagflow::hdf5 {

// The innermost message of HDF5's error stack: what actually went wrong ("required filter
// 'blosc' is not registered", "truncated file", ...).
inline herr_t keepInnermost(unsigned, const H5E_error2_t* error, void* text) {
  if (error->desc != nullptr && error->desc[0] != '\0')
    *static_cast<std::string*>(text) = error->desc;
  return 0;
}
inline std::string hdf5Reason() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keepInnermost, &text);
  if (text.empty()) return "HDF5 gave no reason";
  // A failed system call comes as "file write failed: time = ..., buf = ..., errno = 28,
  // error message = 'No space left on device', ...": the system's message is the reason.
  const std::string marker = "error message = '";
  if (const auto at = text.find(marker); at != std::string::npos) {
    const auto begin = at + marker.size();
    if (const auto end = text.find('\'', begin); end != std::string::npos) {
      return text.substr(0, text.find(':')) + ": " + text.substr(begin, end - begin);
    }
  }
  return text;
}

// Owns one HDF5 identifier and closes it with the matching function.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
    if (id_ < 0) throw IoError("HDF5: cannot " + what + ": " + hdf5Reason());
  }
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), close_(other.close_) {}
  Handle& operator=(Handle&& other) noexcept {
    std::swap(id_, other.id_);
    std::swap(close_, other.close_);
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  operator hid_t() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports failure (a close is where buffered data reach the disk).
  void close(const std::string& what) {
    const herr_t status = close_(id_);
    id_ = -1;
    if (status < 0) throw IoError("HDF5: cannot " + what + ": " + hdf5Reason());
  }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

inline void check(herr_t status, const std::string& what) {
  if (status < 0) throw IoError("HDF5: cannot " + what + ": " + hdf5Reason());
}

inline Handle createGroup(hid_t parent, const std::string& name) {
  return Handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                "create group '" + name + "'");
}

template <typename T>
hid_t nativeType() {
  if constexpr (std::is_same_v<T, std::int64_t>) return H5T_NATIVE_INT64;
  if constexpr (std::is_same_v<T, std::uint64_t>) return H5T_NATIVE_UINT64;
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  if constexpr (std::is_same_v<T, std::int8_t>) return H5T_NATIVE_INT8;
}

// Little-endian on disk whatever the host, as both file layouts state.
template <typename T>
hid_t fileType() {
  if constexpr (std::is_same_v<T, std::int64_t>) return H5T_STD_I64LE;
  if constexpr (std::is_same_v<T, std::uint64_t>) return H5T_STD_U64LE;
  if constexpr (std::is_same_v<T, double>) return H5T_IEEE_F64LE;
  if constexpr (std::is_same_v<T, std::int8_t>) return H5T_STD_I8LE;
}

}  // namespace tagflow::hdf5
