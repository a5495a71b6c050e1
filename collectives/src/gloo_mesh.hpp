// A gloo context whose members connect to each other within one deadline. gloo's own
// connectFullMesh waits for each pair's connection five times the context's timeout (150 s on
// a group whose timeout is 30 s), and a member gone after publishing its address leaves the
// others waiting that long.
#pragma once

#include <gloo/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>

#include <chrono>
#include <memory>

namespace troupe::detail {

class gloo_mesh final : public gloo::Context {
public:
  using gloo::Context::Context;

  /// Makes a pair with every other member, publishes their addresses in `store`, and connects
  /// each to the address its peer published, by `deadline`. Operations afterwards default to
  /// the context's own timeout.
  void connect(gloo::rendezvous::Store& store,
               const std::shared_ptr<gloo::transport::Device>& device,
               std::chrono::steady_clock::time_point deadline);
};

} // namespace troupe::detail
