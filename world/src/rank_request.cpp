// A member that joins the formed world at any rank (world_options::any_rank) asks rank 0 for one
// before it makes its core, whose tables are its rank's: through the same door as a join (its
// proven name, the secret, TLS), rank 0 holds the lowest free rank from world_size up for its
// name (member_joining.cpp) until it joins, or the world's timeout passes.
#include "member_messages.hpp"
#include "world_core.hpp"

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/network.hpp"
#include "troupe/actors/serialization.hpp"

namespace troupe::detail {

int request_rank(runtime_state& rt, const world_options& options) {
  const auto rank0 = parse_endpoint(options.address, "world_options::address");
  if (options.tls)
    use_tls(rt, *options.tls);
  const link_policy link{
    options.secret, options.name, options.tls.has_value(), {}, options.max_message_bytes};
  caf::actor member0;
  try {
    member0 = connect(rt, rank0, link,
                      std::chrono::steady_clock::now() +
                        std::min<std::chrono::milliseconds>(options.timeout, late_join_grace));
  } catch (const timeout_error& e) {
    throw peer_lost("world: rank 0 (" + rank0.to_string() + ") cannot be reached for a rank: it " +
                    "is lost, or never started (" + e.what() + ")");
  }
  caf::scoped_actor self{*rt.system};
  failure why;
  wire_bytes payload;
  self
    ->request(member0, options.timeout,
              reserve_message::make(wire_version, options.name,
                                    static_cast<std::int32_t>(options.world_size),
                                    static_cast<std::int32_t>(options.max_world_size)))
    .receive(
      [&](std::uint8_t status, std::string& text, wire_bytes& bytes) {
        tsan_acquire(mailbox_of(member0)); // rank 0's answer, taken outside any actor
        why = reply_failure(status, text);
        payload = std::move(bytes);
      },
      [&](caf::error& e) {
        why = failure::of<peer_lost>("world: rank 0 gave '" + options.name +
                                     "' no rank: " + to_string(e));
      });
  if (why.failed())
    std::rethrow_exception(why.exception());
  return deserialize<std::int32_t>(from_wire(payload));
}

} // namespace troupe::detail
