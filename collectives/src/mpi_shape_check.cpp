#include "mpi_shape_check.hpp"

#include "element_dispatch.hpp"

#include "troupe/actors/error.hpp"

#include <cstddef>
#include <cstring>
#include <mutex>

namespace troupe::detail {

namespace {

constexpr std::size_t max_signature = 128;
constexpr std::size_t max_fused = 1024;

struct check_block {
  std::uint64_t disagree; // set by the op where any two blocks differ
  // Compared, from here to the payload: equal on members whose signatures are.
  std::uint64_t fused; // the all_reduce's tensor is in `payload`
  std::uint64_t count;
  std::uint32_t signature_bytes;
  std::uint8_t type, op, unused[2];
  std::byte signature[max_signature];
  alignas(16) std::byte payload[max_fused];
};
constexpr std::size_t compared_from = offsetof(check_block, fused);
constexpr std::size_t compared_bytes = offsetof(check_block, payload) - compared_from;

template <class T, class F>
void combine_with(const T* a, T* b, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) // one loop per op: the compiler vectorizes each
    b[i] = f(a[i], b[i]);
}

template <class T>
void combine_elements(reduce_op op, const void* in, void* inout, std::size_t n) {
  const auto* a = static_cast<const T*>(in);
  auto* b = static_cast<T*>(inout);
  if constexpr (std::is_same_v<T, bool>) {
    if (op == reduce_op::sum || op == reduce_op::max)
      combine_with(a, b, n, [](bool x, bool y) { return x || y; });
    else
      combine_with(a, b, n, [](bool x, bool y) { return x && y; });
  } else {
    switch (op) {
    case reduce_op::sum:
      combine_with(a, b, n, [](T x, T y) { return static_cast<T>(x + y); });
      break;
    case reduce_op::product:
      combine_with(a, b, n, [](T x, T y) { return static_cast<T>(x * y); });
      break;
    case reduce_op::min: combine_with(a, b, n, [](T x, T y) { return std::min(x, y); }); break;
    case reduce_op::max: combine_with(a, b, n, [](T x, T y) { return std::max(x, y); }); break;
    }
  }
}

void combine(void* in, void* inout, int* length, MPI_Datatype*) {
  auto* a = static_cast<const check_block*>(in);
  auto* b = static_cast<check_block*>(inout);
  for (int i = 0; i < *length; ++i, ++a, ++b) {
    const auto* left = reinterpret_cast<const std::byte*>(a) + compared_from;
    const auto* right = reinterpret_cast<const std::byte*>(b) + compared_from;
    if (a->disagree != 0 || b->disagree != 0 || std::memcmp(left, right, compared_bytes) != 0) {
      b->disagree = 1;
      continue;
    }
    if (b->fused != 0)
      with_element_type(static_cast<element_type>(b->type), [&]<class T>() {
        combine_elements<T>(static_cast<reduce_op>(b->op), a->payload, b->payload, b->count);
      });
  }
}

/// The block's MPI datatype and troupe's op on it, made once MPI is up. One size for every
/// all_reduce: members whose tensors differ (what the check is for) must still make the same
/// MPI call.
struct check_types {
  MPI_Datatype block = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};

const check_types& types() {
  static check_types made;
  static std::once_flag once;
  std::call_once(once, [] {
    MPI_Type_contiguous(static_cast<int>(sizeof(check_block)), MPI_BYTE, &made.block);
    MPI_Type_commit(&made.block);
    MPI_Op_create(&combine, /*commute=*/1, &made.op);
  });
  return made;
}

} // namespace

check_outcome mpi_shape_check(MPI_Comm comm, const void* mine, std::size_t bytes,
                              const tensor_view* reduce, reduce_op op) {
  if (bytes > max_signature)
    throw state_error("the shape check's signature outgrew its block"); // a build's mistake
  check_block block; // the payload is written only when used
  std::memset(&block, 0, offsetof(check_block, payload));
  std::memcpy(block.signature, mine, bytes);
  block.signature_bytes = static_cast<std::uint32_t>(bytes);
  const bool fused = reduce != nullptr && reduce->bytes() <= max_fused;
  if (fused) {
    block.fused = 1;
    block.count = reduce->count;
    block.type = static_cast<std::uint8_t>(reduce->type);
    block.op = static_cast<std::uint8_t>(op);
    std::memcpy(block.payload, reduce->data, reduce->bytes());
  }
  MPI_Allreduce(MPI_IN_PLACE, &block, 1, types().block, types().op, comm);
  if (block.disagree != 0)
    return check_outcome::disagreed;
  if (!fused)
    return check_outcome::agreed;
  std::memcpy(reduce->data, block.payload, reduce->bytes());
  return check_outcome::agreed_and_reduced;
}

} // namespace troupe::detail
