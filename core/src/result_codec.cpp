#include "tagflow/core/result_codec.hpp"

#include <bit>
#include <cstring>
#include <string>
#include <type_traits>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr std::uint32_t kResultsMagic = 0x53455254;  // "TRES"
constexpr std::uint32_t kProfileMagic = 0x464F5250;  // "PROF"

class ByteWriter {
 public:
  void u64(std::uint64_t value) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  }
  void i64(std::int64_t value) { u64(static_cast<std::uint64_t>(value)); }
  void f64(double value) { u64(std::bit_cast<std::uint64_t>(value)); }
  void text(const std::string& value) {
    u64(value.size());
    bytes_.insert(bytes_.end(), value.begin(), value.end());
  }
  template <typename T>
  void vector(const std::vector<T>& values) {
    u64(values.size());
    for (const T& value : values) element(value);
  }
  std::vector<std::uint8_t> take() { return std::move(bytes_); }

 private:
  void element(std::int64_t value) { i64(value); }
  void element(std::uint64_t value) { u64(value); }
  void element(double value) { f64(value); }
  void element(std::int8_t value) { bytes_.push_back(static_cast<std::uint8_t>(value)); }
  void element(const std::string& value) { text(value); }

  std::vector<std::uint8_t> bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  std::uint64_t u64() {
    need(8, "a number");
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= std::uint64_t{bytes_[at_ + i]} << (8 * i);
    at_ += 8;
    return value;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  double f64() { return std::bit_cast<double>(u64()); }
  std::string text() {
    const std::uint64_t size = u64();
    need(size, "a string");
    std::string value(reinterpret_cast<const char*>(bytes_.data() + at_), size);
    at_ += size;
    return value;
  }
  std::int8_t i8() {
    need(1, "a byte");
    return static_cast<std::int8_t>(bytes_[at_++]);
  }
  // A count of elements of at least `element_size` bytes each, checked against what is left.
  std::size_t count(std::size_t element_size) {
    const std::uint64_t n = u64();
    if (n > (bytes_.size() - at_) / element_size) fail("a count of " + std::to_string(n));
    return n;
  }
  template <typename T, typename Read>
  std::vector<T> vector(std::size_t element_size, Read read) {
    std::vector<T> values(count(element_size));
    for (T& value : values) value = read();
    return values;
  }
  bool done() const { return at_ == bytes_.size(); }
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError("encoded results: " + what + " at byte " + std::to_string(at_) +
                    " does not fit the " + std::to_string(bytes_.size()) + " bytes");
  }

 private:
  void need(std::uint64_t size, const char* what) const {
    if (size > bytes_.size() - at_) fail(what);
  }

  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

void writeParameters(ByteWriter& out, const Parameters& parameters) {
  out.u64(parameters.entries().size());
  for (const auto& [key, value] : parameters.entries()) {
    out.text(key);
    out.u64(value.index());
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::int64_t>) {
            out.i64(v);
          } else if constexpr (std::is_same_v<V, double>) {
            out.f64(v);
          } else if constexpr (std::is_same_v<V, bool>) {
            out.u64(v ? 1 : 0);
          } else if constexpr (std::is_same_v<V, std::string>) {
            out.text(v);
          } else {
            out.vector(v);
          }
        },
        value);
  }
}

Parameters readParameters(ByteReader& in) {
  Parameters parameters;
  const std::size_t entries = in.count(16);
  for (std::size_t i = 0; i < entries; ++i) {
    std::string key = in.text();
    switch (in.u64()) {
      case 0:
        parameters.set(std::move(key), in.i64());
        break;
      case 1:
        parameters.set(std::move(key), in.f64());
        break;
      case 2:
        parameters.set(std::move(key), in.u64() != 0);
        break;
      case 3:
        parameters.set(std::move(key), in.text());
        break;
      case 4:
        parameters.set(std::move(key), in.vector<std::int64_t>(8, [&] { return in.i64(); }));
        break;
      case 5:
        parameters.set(std::move(key), in.vector<double>(8, [&] { return in.f64(); }));
        break;
      case 6:
        parameters.set(std::move(key), in.vector<std::string>(8, [&] { return in.text(); }));
        break;
      default:
        in.fail("the type of parameter '" + key + "'");
    }
  }
  return parameters;
}

void requireMagic(ByteReader& in, std::uint32_t magic, const char* what) {
  if (in.u64() != magic) in.fail(std::string("the magic number of ") + what);
}

}  // namespace

std::vector<std::uint8_t> encodeResultSets(const std::vector<ResultSet>& results) {
  ByteWriter out;
  out.u64(kResultsMagic);
  out.u64(results.size());
  for (const ResultSet& result : results) {
    out.text(result.kind);
    out.text(result.name);
    writeParameters(out, result.parameters);
    out.u64(result.parameter_units.size());
    for (const auto& [key, unit] : result.parameter_units) {
      out.text(key);
      out.text(unit);
    }
    writeParameters(out, result.facts);
    out.u64(result.arrays.size());
    for (const ResultArray& array : result.arrays) {
      out.text(array.name);
      out.text(array.unit);
      out.text(array.description);
      out.vector(std::vector<std::uint64_t>(array.shape.begin(), array.shape.end()));
      out.u64(array.data.index());
      std::visit([&](const auto& values) { out.vector(values); }, array.data);
    }
  }
  return out.take();
}

std::vector<ResultSet> decodeResultSets(std::span<const std::uint8_t> bytes) {
  ByteReader in(bytes);
  requireMagic(in, kResultsMagic, "result sets");
  std::vector<ResultSet> results(in.count(16));
  for (ResultSet& result : results) {
    result.kind = in.text();
    result.name = in.text();
    result.parameters = readParameters(in);
    const std::size_t units = in.count(16);
    for (std::size_t i = 0; i < units; ++i) {
      std::string key = in.text();
      result.parameter_units.emplace_back(std::move(key), in.text());
    }
    result.facts = readParameters(in);
    result.arrays.resize(in.count(40));
    for (ResultArray& array : result.arrays) {
      array.name = in.text();
      array.unit = in.text();
      array.description = in.text();
      for (std::uint64_t extent : in.vector<std::uint64_t>(8, [&] { return in.u64(); })) {
        array.shape.push_back(extent);
      }
      switch (in.u64()) {
        case 0:
          array.data = in.vector<std::int64_t>(8, [&] { return in.i64(); });
          break;
        case 1:
          array.data = in.vector<std::uint64_t>(8, [&] { return in.u64(); });
          break;
        case 2:
          array.data = in.vector<double>(8, [&] { return in.f64(); });
          break;
        case 3:
          array.data = in.vector<std::int8_t>(1, [&] { return in.i8(); });
          break;
        default:
          in.fail("the type of array '" + array.name + "'");
      }
    }
  }
  if (!in.done()) in.fail("the end");
  return results;
}

std::vector<std::uint8_t> encodeProfile(const Profile& profile) {
  ByteWriter out;
  out.u64(kProfileMagic);
  out.u64(profile.nodes.size());
  for (const NodeProfile& node : profile.nodes) {
    out.text(node.name);
    out.text(node.kind);
    out.u64(node.blocks);
    out.u64(node.tags);
    out.f64(node.busy_s);
    out.f64(node.wait_s);
    out.f64(node.max_latency_s);
  }
  out.u64(profile.tags);
  out.u64(profile.blocks);
  out.i64(profile.stream_duration_ps);
  out.f64(profile.wall_s);
  out.i64(profile.threads);
  out.u64(profile.max_blocks_in_flight);
  return out.take();
}

Profile decodeProfile(std::span<const std::uint8_t> bytes) {
  ByteReader in(bytes);
  requireMagic(in, kProfileMagic, "a profile");
  Profile profile;
  profile.nodes.resize(in.count(56));
  for (NodeProfile& node : profile.nodes) {
    node.name = in.text();
    node.kind = in.text();
    node.blocks = in.u64();
    node.tags = in.u64();
    node.busy_s = in.f64();
    node.wait_s = in.f64();
    node.max_latency_s = in.f64();
  }
  profile.tags = in.u64();
  profile.blocks = in.u64();
  profile.stream_duration_ps = in.i64();
  profile.wall_s = in.f64();
  profile.threads = static_cast<int>(in.i64());
  profile.max_blocks_in_flight = in.u64();
  if (!in.done()) in.fail("the end");
  return profile;
}

}  // namespace tagflow
