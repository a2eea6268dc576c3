// Branch-free selection for hot loops over tags. A data-dependent condition (is this the gate's
// channel? is the partner within the window?) is unpredictable, and a misprediction costs more
// than the whole loop body; the compiler, however, often turns a `?:` back into a branch. These
// helpers hide the condition from the optimiser and select with arithmetic on masks.
#pragma once

#include <cstdint>
#include <type_traits>

namespace tagflow::fast_path {

// 0 or 1, as a value the optimiser cannot reason about (so it cannot branch on it).
inline std::uint64_t opaqueFlag(bool condition) {
  std::uint64_t flag = condition ? 1 : 0;
  asm("" : "+r"(flag));
  return flag;
}

// 1 when a == b, else 0, computed without a comparison the optimiser could branch on.
inline std::uint64_t flagIfEqual(std::uint32_t a, std::uint32_t b) {
  std::uint64_t flag = (static_cast<std::uint64_t>(a ^ b) - 1) >> 63;
  asm("" : "+r"(flag));
  return flag;
}

// `if_true` when flag is 1, `if_false` when it is 0.
template <class T>
requires std::is_integral_v<T>
inline T selectByFlag(std::uint64_t flag, T if_true, T if_false) {
  const std::uint64_t mask = 0 - flag;
  const auto yes = static_cast<std::uint64_t>(if_true);
  const auto no = static_cast<std::uint64_t>(if_false);
  return static_cast<T>(no ^ ((yes ^ no) & mask));
}

// The same as a conditional move on x86-64: for a value carried from one tag to the next, where
// the select's latency adds to every iteration (one cycle, against three for the arithmetic).
// Elsewhere selectByFlag() is as good or better: the move needs the flag tested first.
template <class T>
inline T moveIfFlag(std::uint64_t flag, T if_true, T if_false) {
  static_assert(std::is_integral_v<T> && sizeof(T) == 8, "a conditional move of 64 bits");
#if defined(__x86_64__)
  asm("test %[flag], %[flag]\n\tcmovnz %[yes], %[no]"
      : [no] "+r"(if_false)
      : [flag] "r"(flag), [yes] "r"(if_true)
      : "cc");
  return if_false;
#else
  return selectByFlag(flag, if_true, if_false);
#endif
}

// `if_equal` when a == b, else `otherwise`: on x86-64 one comparison and one conditional move,
// with `a` read straight from memory where it lies there (a tag's channel), where flagIfEqual()
// and a select take six instructions.
template <class T, class Key>
inline T moveIfEqual(const Key& a, Key b, T if_equal, T otherwise) {
  static_assert(sizeof(T) == 8 && (std::is_integral_v<T> || std::is_pointer_v<T>),
                "a conditional move of 64 bits");
  static_assert(std::is_integral_v<Key> && sizeof(Key) == 4, "a comparison of 32 bits");
#if defined(__x86_64__)
  asm("cmp %[b], %[a]\n\tcmove %[yes], %[no]"
      : [no] "+r"(otherwise)
      : [a] "rm"(a), [b] "r"(b), [yes] "r"(if_equal)
      : "cc");
  return otherwise;
#else
  return a == b ? if_equal : otherwise;
#endif
}

// `count + 1` when a == b, else `count`: for a count carried from one tag to the next. On
// x86-64 a subtraction, a comparison that leaves the equality in the carry flag and an add with
// carry: three instructions, one cycle on the carried count (flagIfEqual() and an add take
// five, a conditional move two cycles).
inline std::uint64_t countIfEqual(std::uint64_t count, std::uint32_t a, std::uint32_t b) {
#if defined(__x86_64__)
  asm("sub %[b], %[a]\n\tcmp $1, %[a]\n\tadc $0, %[count]"
      : [count] "+r"(count), [a] "+r"(a)
      : [b] "r"(b)
      : "cc");
  return count;
#else
  return count + (a == b ? 1 : 0);
#endif
}

// Both moves of moveIfEqual() after one comparison: `first` becomes `first_if_equal` and
// `second` becomes `second_if_equal` when a == b (the compiler compares once per move).
template <class T, class U, class Key>
inline void moveBothIfEqual(const Key& a, Key b, T& first, T first_if_equal, U& second,
                            U second_if_equal) {
  static_assert(sizeof(T) == 8 && (std::is_integral_v<T> || std::is_pointer_v<T>),
                "a conditional move of 64 bits");
  static_assert(sizeof(U) == 8 && (std::is_integral_v<U> || std::is_pointer_v<U>),
                "a conditional move of 64 bits");
  static_assert(std::is_integral_v<Key> && sizeof(Key) == 4, "a comparison of 32 bits");
#if defined(__x86_64__)
  asm("cmp %[b], %[a]\n\tcmove %[yes1], %[no1]\n\tcmove %[yes2], %[no2]"
      : [no1] "+r"(first), [no2] "+r"(second)
      : [a] "rm"(a), [b] "r"(b), [yes1] "r"(first_if_equal), [yes2] "r"(second_if_equal)
      : "cc");
#else
  if (a == b) {
    first = first_if_equal;
    second = second_if_equal;
  }
#endif
}

}  // namespace tagflow::fast_path
