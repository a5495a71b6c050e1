// Placeholder names: those troupe makes for itself between parts ("_pt_part_ph_<n>",
// "_pt_dist_<n>") begin with a prefix users may not take, so a user's input is never fed
// another array; and within one DAG a name stands for one input.
#pragma once

#include "troupe/graph/node.hpp"

#include <span>
#include <string_view>

namespace troupe::graph::detail {

inline constexpr std::string_view reserved_prefix = "_pt_";

/// A placeholder of a reserved name: for the partitioners and for parts read back.
node_ptr internal_placeholder(std::string name, shape_t shape, dtype type);

/// name_clash_error naming both if two placeholders among `nodes` (a DAG's, in the order its
/// pass already made: a second walk of a million nodes cost find_partition a tenth of its time)
/// share a name but differ in shape or dtype.
void check_placeholder_names(std::span<const node_ptr> nodes);

} // namespace troupe::graph::detail
