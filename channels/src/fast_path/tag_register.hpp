// TagRegister: a Tag held in one 128-bit register. A one-pass loop that copies each tag and
// writes candidate tags at its time on channels of its own builds each candidate with a single
// blend (a template's header, the copied tag's time) instead of two 8-byte stores or a load
// and an insert: these loops are bound by how many instructions the core issues per tag.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "tagflow/core/tag.hpp"

namespace tagflow::fast_path {

class TagRegister {
 public:
  // The 16 bytes at `bytes`: a Tag, or a template whose first 8 bytes are a tag's header
  // (type, missed events, channel) and whose last 8 may hold anything.
  static TagRegister load(const void* bytes) {
    TagRegister loaded;
#if defined(__SSE2__)
    loaded.bits_ = _mm_loadu_si128(static_cast<const __m128i*>(bytes));
#else
    std::memcpy(&loaded.bits_, bytes, sizeof loaded.bits_);
#endif
    return loaded;
  }

  void store(Tag* at) const {
#if defined(__SSE2__)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(at), bits_);
#else
    std::memcpy(reinterpret_cast<char*>(at), &bits_, sizeof bits_);
#endif
  }

  // This tag's header with the time of `timed`.
  TagRegister withTimeOf(TagRegister timed) const {
    TagRegister joined;
#if defined(__AVX2__)
    // The template second: a blend can take that operand straight from memory.
    joined.bits_ = _mm_blend_epi32(timed.bits_, bits_, 0b0011);
#elif defined(__SSE2__)
    joined.bits_ =
        _mm_castpd_si128(_mm_move_sd(_mm_castsi128_pd(timed.bits_), _mm_castsi128_pd(bits_)));
#else
    joined.bits_ = {bits_.header, timed.bits_.time};
#endif
    return joined;
  }

 private:
#if defined(__SSE2__)
  __m128i bits_;
#else
  struct {
    std::uint64_t header;
    std::int64_t time;
  } bits_;
#endif
};

static_assert(sizeof(Tag) == 16 && offsetof(Tag, time) == 8, "TagRegister blends at byte 8");

}  // namespace tagflow::fast_path
