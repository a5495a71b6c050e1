// What a collective group asks of its engine (gloo or MPI): blocking operations
// on raw buffers, each of which throws a troupe error when a member is lost
// (peer_lost) or the group's timeout passes (timeout_error). The group
// (collective_core) orders the calls, checks their arguments and shapes, and
// runs point-to-point messages as a header then a body.
#pragma once

#include "troupe/collectives/collective_group.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

namespace troupe::detail {

class world_core;

/// What a shape check found: every member calls the same, and maybe the collective already ran.
enum class check_outcome { agreed, agreed_and_reduced, disagreed };

class collective_engine {
public:
  virtual ~collective_engine() = default;

  /// Collectives. `sequence` numbers them, the same on every member.
  virtual void all_reduce(const tensor_view& t, reduce_op op, std::uint32_t sequence) = 0;
  virtual void reduce(const tensor_view& t, reduce_op op, int root, std::uint32_t sequence) = 0;
  virtual void broadcast(const tensor_view& t, int root, std::uint32_t sequence) = 0;
  /// outputs[r] (every r, this member's too) gets member r's `bytes` at `in`.
  virtual void all_gather(const void* in, std::span<void* const> outputs, std::size_t bytes,
                          std::uint32_t sequence) = 0;
  /// At `root` as all_gather; elsewhere `outputs` is empty.
  virtual void gather(const void* in, std::span<void* const> outputs, std::size_t bytes, int root,
                      std::uint32_t sequence) = 0;
  /// `out` gets root's inputs[rank()]; `inputs` is empty but at `root`.
  virtual void scatter(std::span<const void* const> inputs, void* out, std::size_t bytes, int root,
                       std::uint32_t sequence) = 0;
  virtual void barrier(std::uint32_t sequence) = 0;

  /// The shape check with, for an all_reduce (`reduce`, else null), the collective itself in
  /// the same exchange where it is small enough, for an engine that can: whether every
  /// member's `bytes` at `mine` agree. nullopt: the engine cannot (the caller exchanges the
  /// signatures itself, with exchange_signatures).
  virtual std::optional<check_outcome> check_fused(const void* /*mine*/, std::size_t /*bytes*/,
                                                   const tensor_view* /*reduce*/, reduce_op) {
    return std::nullopt;
  }

  /// The shape check before collective `sequence`: outputs[r] (every r) gets member r's
  /// `bytes` at `in`, the same size every time. An all_gather, unless the engine does better.
  virtual void exchange_signatures(const void* in, std::span<void* const> outputs,
                                   std::size_t bytes, std::uint32_t sequence) {
    all_gather(in, outputs, bytes, sequence);
  }

  /// Point to point on `tag`: a header, then a body whose size the header
  /// gives.
  virtual void send(std::span<const std::byte> header, std::span<const std::byte> body, int dst,
                    int tag) = 0;
  /// Receives a header from `src` (collective_group::any_source: from any
  /// member); returns the sender.
  virtual int recv_header(std::span<std::byte> header, int src, int tag) = 0;
  virtual void recv_body(std::span<std::byte> body, int src, int tag) = 0;

  /// Makes every wait on a point-to-point message return at once with
  /// state_error (the group is being destroyed). Collectives already running
  /// end as the engine lets them.
  virtual void abort() noexcept = 0;
};

struct engine_setup {
  std::string group; // "collective group 2", for messages
  std::string rendezvous; // the name of the rpc group gloo's store lives in
  std::vector<int> world_ranks; // the members, by group rank
  int rank = -1; // this member's group rank
  collective_options options;
};

/// gloo: joins the members through a store kept by the world (see
/// world_store.hpp).
std::unique_ptr<collective_engine> make_gloo_engine(const std::shared_ptr<world_core>& world,
                                                    const engine_setup& setup);
/// MPI: splits MPI_COMM_WORLD; every member of the world calls it (`member`
/// false for those outside the group, which get nullptr).
std::unique_ptr<collective_engine> make_mpi_engine(const std::shared_ptr<world_core>& world,
                                                   const engine_setup& setup, bool member);

} // namespace troupe::detail
