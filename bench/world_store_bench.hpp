// `world --store` (world_store.cpp): a world on etcd against the embedded one.
#pragma once

#include <string>

namespace troupe::bench {

/// A member process of `world --store`, its part in `spec`; its exit code.
int store_member(const std::string& spec);
/// Runs the figures and prints them; the program's exit code (77: no etcd here).
int store_figures();

} // namespace troupe::bench
