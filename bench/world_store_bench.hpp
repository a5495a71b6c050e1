// `world --store` (world_store.cpp): a world on etcd against the embedded one.
#pragma once

#include <string>

namespace troupe::bench {

/// A member process of `world --store`, its part in `spec`; its exit code.
int store_member(const std::string& spec);
/// Rank 0 of a world of two at `where` that calls in slices as `world --store` says (its
/// descriptors 3 and 4); its exit code.
int slice_calls_member(const std::string& where);
/// Runs the figures and prints them; the program's exit code (77: no etcd here).
int store_figures();

} // namespace troupe::bench
