// The random numbers of the synthetic source. A RandomStream is one reproducible stream, a
// function of the words its seeder hands it and nothing else; a loop draws from it through a
// RandomStream::Reader, which gives
// - uniform 64-bit words: xoshiro256++ (Blackman and Vigna, "Scrambled linear pseudorandom
//   number generators", 2021) in eight interleaved lanes, each seeded by splitmix64 (the
//   seeding the authors recommend). The words are made a batch at a time, the lanes as two
//   vectors of four stepped side by side (one alone waits on its own results: a step is a
//   chain of dependent operations), so that a draw is a load;
// - unit-mean exponential and unit-sigma normal variates by the ziggurat method (Marsaglia and
//   Tsang, "The ziggurat method for generating random variables", 2000) with 256 layers: in
//   about 99 % of draws one word, a table look-up and a multiplication, no logarithm. The
//   layer comes from the low 8 bits of the word and the position inside it from the high 53,
//   so the two are independent (sharing bits between them is the defect Doornik found in the
//   original code, 2005). The rare draws that miss the fast path take their further words
//   from a second, scalar xoshiro256++ generator of the stream;
// - normal variates truncated at kNormalTruncation (6) sigma: a draw beyond it is drawn
//   again, so the values follow the normal distribution conditioned on |x| <= 6. The synthetic
//   source sizes its guard interval with that bound.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace tagflow::synthetic {

inline constexpr double kNormalTruncation = 6.0;

// splitmix64 (Steele, Lea and Flood 2014; Vigna's reference code): a counter through a
// mixing function, every output distinct. It seeds the xoshiro generators of every stream.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

// The ziggurat's tables for one density f (decreasing on [0, inf), f(0) = 1). A word picks a
// layer (its low 8 bits) and a position in it (its high 53 bits): layer i spans [0, x_i) in
// x, and the position gives x = position * width[i]. That x lies under f for sure if the
// position is below inside_limit[i] (the fast path, about 99 % of words); else the wedge test
// compares a uniform height between density[i] and density[i - 1] with f(x). Layer 0 is the
// base strip: a rectangle up to r and the tail.
struct ZigguratTables {
  std::array<std::uint64_t, 256> inside_limit;
  std::array<double, 256> width;
  std::array<double, 256> density;
  double r = 0;  // where the tail begins

  static std::size_t layerOf(std::uint64_t word) { return word & 0xFF; }
  static std::uint64_t positionOf(std::uint64_t word) { return word >> 11; }
  bool onFastPath(std::uint64_t word) const {
    return positionOf(word) < inside_limit[layerOf(word)];
  }
  double x(std::uint64_t word) const {
    return static_cast<double>(static_cast<std::int64_t>(positionOf(word))) * width[layerOf(word)];
  }
};

// Bit 8 of a word (used by neither the layer nor the position) as the sign of x.
inline double withSignOf(std::uint64_t word, double x) {
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) ^ ((word & 0x100) << 55));
}

const ZigguratTables& exponentialZiggurat();
// The exponential ziggurat's wedge test: whether `height` lies below exp(-x), for x in the
// wedge of layer `layer` (1 to 255), decided exactly as `height < std::exp(-x)` decides it but
// mostly without the exponential: exp(-x) is convex, so over the wedge it lies above its
// tangent at the wedge's left end and below the chord between the wedge's corners. Heights
// clear of both lines by far more than their rounding errors (about 1e-16) are decided by the
// line; only the band between them needs exp.
bool underExponential(const ZigguratTables& z, std::size_t layer, double x, double height);
const ZigguratTables& normalZiggurat();

class RandomStream {
 public:
  // Takes the 32 words of its eight lanes and the 4 of its second generator from `seeder`, in
  // that order (lane l the words 4l to 4l + 3, as its state words 0 to 3): streams seeded from
  // one splitmix64 sequence never share a state.
  explicit RandomStream(SplitMix64& seeder);

  class Reader;

 private:
  static constexpr std::size_t kVectorLanes = 4;
  static constexpr std::size_t kVectors = 2;
  static constexpr std::size_t kBatch = 256;
  // Four lanes as one vector (a GCC and Clang extension: AVX2 registers on x86-64-v3, pairs of
  // SSE2 registers on x86-64).
  using Lanes = std::uint64_t __attribute__((vector_size(kVectorLanes * sizeof(std::uint64_t))));
  // A vector's xoshiro256 state: word k of each of its lanes.
  using LaneStates = std::array<Lanes, 4>;

  // One xoshiro256++ step of four lanes (word k of each lane's state in s_k); writes their
  // four words to `words`.
  static void step(Lanes& s0, Lanes& s1, Lanes& s2, Lanes& s3, std::uint64_t* words);
  // Makes the next batch; returns its first word.
  const std::uint64_t* refill();
  std::uint64_t slowPathBits();
  double slowPathUniformOpen() {
    return (static_cast<double>(static_cast<std::int64_t>(slowPathBits() >> 11)) + 0.5) * 0x1.0p-53;
  }
  double exponentialOutside(std::uint64_t word);
  double normalOutside(std::uint64_t word);

  // Each round of a batch writes one word of each of states_[0]'s four lanes, then one of each
  // of states_[1]'s: word i of the batch comes from lane i % 8 (lanes 4 to 7 are states_[1]'s).
  std::array<LaneStates, kVectors> states_{};
  alignas(32) std::array<std::uint64_t, kBatch> batch_{};
  std::size_t next_ = kBatch;  // the first word not drawn yet
  std::array<std::uint64_t, 4> slow_path_state_{};
};

// Draws from a RandomStream, its cursor copied into the reader for the reader's lifetime (one
// reader per stream at a time). A reader is a local of the loop that draws: its cursor stays
// in a register, where the stream's own would be reloaded from memory for every draw (the
// loop stores tags, whose byte fields may alias anything, and it calls the refill).
class RandomStream::Reader {
 public:
  explicit Reader(RandomStream& stream)
      : stream_(stream),
        next_(stream.batch_.data() + stream.next_),
        exponential_(exponentialZiggurat()),
        normal_(normalZiggurat()) {}
  ~Reader() { stream_.next_ = static_cast<std::size_t>(next_ - stream_.batch_.data()); }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  std::uint64_t bits() {
    if (next_ == end()) [[unlikely]]
      next_ = stream_.refill();
    return *next_++;
  }

  // For a loop that must not call anything (a call costs it the registers its values live
  // in): the words left in the batch, at least `at_least` of them (fewer left are skipped for
  // a new batch), to be drawn from the front and handed back with drawn().
  std::span<const std::uint64_t> remaining(std::size_t at_least) {
    if (static_cast<std::size_t>(end() - next_) < at_least) [[unlikely]]
      next_ = stream_.refill();
    return {next_, end()};
  }
  void drawn(std::size_t count) { next_ += count; }

  double exponential() { return exponential(bits()); }
  // The same from a word the caller drew.
  double exponential(std::uint64_t word) {
    return exponential_.onFastPath(word) ? exponential_.x(word) : stream_.exponentialOutside(word);
  }

  double truncatedNormal() { return truncatedNormal(bits()); }
  // The same from a word the caller drew.
  double truncatedNormal(std::uint64_t word) {
    return normal_.onFastPath(word) ? withSignOf(word, normal_.x(word))
                                    : stream_.normalOutside(word);
  }

 private:
  const std::uint64_t* end() const { return stream_.batch_.data() + kBatch; }

  RandomStream& stream_;
  const std::uint64_t* next_;
  const ZigguratTables& exponential_;
  const ZigguratTables& normal_;
};

}  // namespace tagflow::synthetic
