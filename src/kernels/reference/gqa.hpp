#pragma once
// Grouped-query attention's head mapping, in one place: with Hq query heads and Hkv key/value
// heads (Hkv divides Hq), each key/value head serves Hq / Hkv consecutive query heads (ONNX's
// Attention and torch's enable_gqa convention), so query head h reads key/value head
//   kv(h) = ⌊h / (Hq / Hkv)⌋        (Hq = Hkv: kv(h) = h, multi-head; Hkv = 1: kv(h) = 0, multi-query)
#include <cstddef>

namespace vl {

/// The key/value head that query head h reads under grouped-query attention: h / (Hq / Hkv).
/// The caller has checked that Hkv ≥ 1 divides Hq.
constexpr std::size_t kv_head_of(std::size_t h, std::size_t Hq, std::size_t Hkv) { return h / (Hq / Hkv); }

static_assert(kv_head_of(5, 8, 8) == 5 && kv_head_of(7, 8, 1) == 0 && kv_head_of(3, 8, 2) == 0 && kv_head_of(4, 8, 2) == 1);

}  // namespace vl
