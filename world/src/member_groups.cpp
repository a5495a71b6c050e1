// Groups' rendezvous at the member actor, on the coordinator (rank 0, or with a store the oldest
// member): each member of a group arrives (in its own
// name only, bringing at most a small payload) and is answered once every member has (of a
// group that follows the world, every member present when the first came); coordinator.hpp
// keeps the rendezvous.
#include "member_handlers.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "troupe/actors/serialization.hpp"

#include <algorithm>

namespace troupe::detail {

namespace {

/// What a member may bring to a rendezvous (a shape check's signature is 88 bytes).
constexpr std::size_t max_rendezvous_payload = 4096;
/// How long a rendezvous' name may be (it names a group of up to 255 bytes).
constexpr std::size_t max_rendezvous_name = 512;

/// Rank 0: why member `rank`'s arrival at rendezvous `what` is refused, if it is.
std::optional<failure> arrival_refusal(member_actor* self, const std::string& what, int rank) {
  if (what.size() > max_rendezvous_name)
    return failure::of<invalid_argument>("a rendezvous name of " + std::to_string(what.size()) +
                                         " bytes, over the limit of " +
                                         std::to_string(max_rendezvous_name));
  if (rank != sender_rank(self))
    return failure::of<invalid_argument>("a group request for rank " + std::to_string(rank) +
                                         " must come from that member");
  return std::nullopt;
}

/// The coordinator: member `rank` arrives at a group's rendezvous. Nothing is moved out of the
/// message before it may wait (caf::skip): it is tried again as it came.
reply_result arrive(member_actor* self, const std::string& what, const wire_bytes& ranks, int rank,
                    wire_bytes& payload) {
  if (auto refusal = arrival_refusal(self, what, rank))
    return sender_rank(self) < 0 && awaits_news(self) ? reply_result{caf::skip}
                                                      : failed_reply(*refusal);
  if (payload.size() > max_rendezvous_payload)
    return failed_reply(failure::of<invalid_argument>(
      "a rendezvous payload of " + readable_bytes(payload.size()) + ", over the limit of " +
      readable_bytes(max_rendezvous_payload)));
  std::vector<int> members;
  try {
    members = deserialize<std::vector<int>>(from_wire(ranks));
  } catch (const serialization_error& e) {
    return failed_reply(failure::of<serialization_error>(e.what()));
  }
  if (names_a_member_gone_here(self, members) && awaits_news(self))
    return caf::skip;
  auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
  self->state.groups.arrive(what, members, rank, promise, std::move(payload));
  return promise;
}

} // namespace

reply_result on_presence_rendezvous(member_actor* self, std::string& what, std::uint8_t round,
                                    std::int32_t rank) {
  if (auto refusal = arrival_refusal(self, what, rank))
    return sender_rank(self) < 0 && awaits_news(self) ? reply_result{caf::skip}
                                                      : failed_reply(*refusal);
  if (round > static_cast<std::uint8_t>(presence_round::each))
    return failed_reply(failure::of<invalid_argument>(
      "a rendezvous of the members present met in no known way (" + std::to_string(round) + ")"));
  auto& st = self->state;
  std::vector<int> present;
  for (int member = 0; member < st.core->members.capacity(); ++member)
    if (st.core->members.name(member) != nullptr && !st.lost[static_cast<std::size_t>(member)])
      present.push_back(member);
  auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
  st.groups.arrive_present(what, round == static_cast<std::uint8_t>(presence_round::once), present,
                           rank, promise);
  return promise;
}

reply_result on_checked_rendezvous(member_actor* self, std::string& what, wire_bytes& ranks,
                                   std::int32_t rank, wire_bytes& payload) {
  return arrive(self, what, ranks, rank, payload);
}

} // namespace troupe::detail
