#include "sources/random_draws.hpp"

#include <cmath>
#include <cstring>
#include <numbers>

namespace tagflow::synthetic {

namespace {

constexpr double kTwoTo53 = 0x1.0p53;

// Marsaglia and Tsang's construction for 256 layers of equal area v under a density f with
// inverse `inverse`, given the start of the tail r. v follows from r (the base strip is the
// rectangle r * f(r) plus the tail's area), which keeps the top layer's area equal to v to
// about 1e-13 of it; the rounded v of the paper leaves 1e-9 for the normal density.
template <typename Density, typename Inverse>
ZigguratTables buildZiggurat(double r, double tail_area, Density f, Inverse inverse) {
  ZigguratTables tables;
  tables.r = r;
  const double v = r * f(r) + tail_area;
  const double base_width = v / f(r);  // the base strip as one rectangle of area v
  tables.inside_limit[0] = static_cast<std::uint64_t>(r / base_width * kTwoTo53);
  tables.width[0] = base_width / kTwoTo53;
  tables.density[0] = 1;       // f(0): the top of layer 1
  tables.inside_limit[1] = 0;  // layer 1 has no layer above it to lie inside
  tables.width[255] = r / kTwoTo53;
  tables.density[255] = f(r);
  double x = r;
  for (std::size_t i = 254; i >= 1; --i) {
    // Layer i + 1 spans [f(x_{i+1}), f(x_i)] in height and [0, x_{i+1}) in x: area v.
    const double below = inverse(v / x + f(x));
    tables.inside_limit[i + 1] = static_cast<std::uint64_t>(below / x * kTwoTo53);
    x = below;
    tables.density[i] = f(x);
    tables.width[i] = x / kTwoTo53;
  }
  return tables;
}

}  // namespace

bool underExponential(const ZigguratTables& z, std::size_t layer, double x, double height) {
  constexpr double kMargin = 1e-12;
  const double left = layer == 1 ? 0.0 : z.width[layer - 1] * kTwoTo53;
  const double right = z.width[layer] * kTwoTo53;
  const double tangent = z.density[layer - 1] * (1 - (x - left));
  if (height < tangent - kMargin) return true;
  const double chord = z.density[layer - 1] +
                       (x - left) * (z.density[layer] - z.density[layer - 1]) / (right - left);
  if (height > chord + kMargin) return false;
  return height < std::exp(-x);
}

const ZigguratTables& exponentialZiggurat() {
  static const ZigguratTables tables = [] {
    const double r = 7.69711747013104972;  // Marsaglia and Tsang, 256 layers
    return buildZiggurat(
        r, std::exp(-r), [](double x) { return std::exp(-x); },
        [](double y) { return -std::log(y); });
  }();
  return tables;
}

const ZigguratTables& normalZiggurat() {
  static const ZigguratTables tables = [] {
    const double r = 3.6541528853610088;  // Marsaglia and Tsang, 256 layers
    // The tail of exp(-x^2 / 2) beyond r (the density is not normalised: f(0) = 1).
    const double tail = std::sqrt(std::numbers::pi / 2) * std::erfc(r / std::sqrt(2.0));
    return buildZiggurat(
        r, tail, [](double x) { return std::exp(-0.5 * x * x); },
        [](double y) { return std::sqrt(-2 * std::log(y)); });
  }();
  return tables;
}

RandomStream::RandomStream(SplitMix64& seeder) {
  for (auto& state : states_) {
    for (std::size_t lane = 0; lane < kVectorLanes; ++lane) {
      for (auto& word : state) word[lane] = seeder.next();
    }
  }
  for (auto& word : slow_path_state_) word = seeder.next();
}

// The lanes pass by reference and the words go out through memory: a vector passed or returned
// by value would be passed differently with and without AVX (GCC warns of it).
[[gnu::always_inline]] inline void RandomStream::step(Lanes& s0, Lanes& s1, Lanes& s2, Lanes& s3,
                                                      std::uint64_t* words) {
  const Lanes sum = s0 + s3;
  const Lanes result = ((sum << 23) | (sum >> 41)) + s0;
  std::memcpy(words, &result, sizeof result);
  const Lanes t = s1 << 17;
  s2 ^= s0;
  s3 ^= s1;
  s1 ^= s2;
  s0 ^= s3;
  s2 ^= t;
  s3 = (s3 << 45) | (s3 >> 19);
}

const std::uint64_t* RandomStream::refill() {
  static_assert(kVectors == 2 && kBatch % (kVectors * kVectorLanes) == 0);
  auto [a0, a1, a2, a3] = states_[0];
  auto [b0, b1, b2, b3] = states_[1];
  for (std::size_t round = 0; round < kBatch; round += kVectors * kVectorLanes) {
    step(a0, a1, a2, a3, batch_.data() + round);
    step(b0, b1, b2, b3, batch_.data() + round + kVectorLanes);
  }
  states_[0] = {a0, a1, a2, a3};
  states_[1] = {b0, b1, b2, b3};
  next_ = 0;
  return batch_.data();
}

std::uint64_t RandomStream::slowPathBits() {
  // xoshiro256++, scalar.
  auto& s = slow_path_state_;
  const std::uint64_t result = std::rotl(s[0] + s[3], 23) + s[0];
  const std::uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = std::rotl(s[3], 45);
  return result;
}

double RandomStream::exponentialOutside(std::uint64_t word) {
  const ZigguratTables& z = exponentialZiggurat();
  for (;;) {
    const std::size_t layer = ZigguratTables::layerOf(word);
    // The base strip beyond the rectangle: the tail, r plus an exponential (memoryless).
    if (layer == 0) return z.r - std::log(slowPathUniformOpen());
    const double x = z.x(word);
    const double height =
        z.density[layer] + slowPathUniformOpen() * (z.density[layer - 1] - z.density[layer]);
    if (underExponential(z, layer, x, height)) return x;
    word = slowPathBits();
    if (z.onFastPath(word)) return z.x(word);
  }
}

double RandomStream::normalOutside(std::uint64_t word) {
  const ZigguratTables& z = normalZiggurat();
  for (;;) {
    const std::size_t layer = ZigguratTables::layerOf(word);
    if (layer == 0) {
      // The tail beyond r (Marsaglia 1964): x = r + e1 / r with exponentials e1, e2, kept if
      // 2 e2 >= (e1 / r)^2. Beyond the truncation the whole draw starts again, so the values
      // are the normal distribution conditioned on |x| <= kNormalTruncation.
      double excess, exponential;
      do {
        excess = -std::log(slowPathUniformOpen()) / z.r;
        exponential = -std::log(slowPathUniformOpen());
      } while (exponential + exponential < excess * excess);
      if (z.r + excess <= kNormalTruncation) return withSignOf(word, z.r + excess);
    } else {
      const double x = z.x(word);
      const double height =
          z.density[layer] + slowPathUniformOpen() * (z.density[layer - 1] - z.density[layer]);
      if (height < std::exp(-0.5 * x * x)) return withSignOf(word, x);
    }
    word = slowPathBits();
    if (z.onFastPath(word)) return withSignOf(word, z.x(word));
  }
}

}  // namespace tagflow::synthetic
