// DoubleLanes: four doubles in one vector register (GCC vector extensions: one AVX2 register on
// x86-64-v3, two SSE2 registers on plain x86-64), for loops that do one computation side by side
// for four independent values: each lane computes exactly what the scalar expression would, the
// same operations in the same order.
//
// multiplyAdd states which products are fused with the addition that follows (one rounding):
// where the target has FMA it fuses, as the compiler would contract a * b + c there; elsewhere
// it rounds twice, as a * b + c is computed without FMA. A file whose other products must stay
// unfused is compiled with -ffp-contract=off, so that its results do not depend on how the
// compiler arranges its loops.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__FMA__)
#include <immintrin.h>
#endif

namespace tagflow {

using DoubleLanes = double __attribute__((vector_size(32)));
using LaneMask = std::int64_t __attribute__((vector_size(32)));

inline DoubleLanes broadcast(double x) {
  return DoubleLanes{x, x, x, x};
}

// Four doubles at any address: a copy of their bytes, which compilers make one unaligned load
// (or store); no alignment is assumed and nothing is read through a cast pointer.
inline DoubleLanes loadLanes(const double* from) {
  DoubleLanes lanes;
  std::memcpy(&lanes, from, sizeof(lanes));
  return lanes;
}

inline void storeLanes(double* to, const DoubleLanes& lanes) {
  std::memcpy(to, &lanes, sizeof(lanes));
}

inline double multiplyAdd(double a, double b, double c) {
#if defined(__FMA__)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

inline DoubleLanes multiplyAdd(const DoubleLanes& a, const DoubleLanes& b, const DoubleLanes& c) {
#if defined(__FMA__)
  return _mm256_fmadd_pd(a, b, c);
#else
  return a * b + c;
#endif
}

}  // namespace tagflow
