// What most programs need of troupe, in one include: the runtime, errors and serialization,
// actors, queues, thread and process pools, worlds and their RPC groups, for the components this
// build of troupe has. It costs a user's file about 1.5 s of compile time on two cores, most of it
// the standard library and cereal.
//
// Tensors (xtensor) are not here, so that this include stays cheap to compile: what works with
// them comes with its own headers.
//   troupe/actors/tensor_serialization.hpp   xt::xarray and xt::xtensor as task arguments, results
//                                             and queue messages
//   troupe/queues/shared_tensor.hpp          tensors handed over in shared memory
//   troupe/collectives/collective_group.hpp  collective groups (component collectives)
//   troupe/servers/*.hpp                     parameter servers (component servers)
//   troupe/assigner/assigner.hpp             placement of model modules (component assigner)
//   troupe/inbatch/inbatch_parallel.hpp      batchflow's inbatch_parallel (component inbatch)
//   troupe/graph/*.hpp, troupe/staged/*.hpp  array-expression DAGs, staged parallel compute
#pragma once

#include "troupe/actors/actor.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/remote_exception.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/serialization.hpp"
#include "troupe/actors/task.hpp"
#include "troupe/actors/tls_options.hpp"

#if __has_include("troupe/queues/queue.hpp")
#include "troupe/queues/queue.hpp"
#include "troupe/queues/retain_memory.hpp"
#include "troupe/queues/shm_segment.hpp"
#endif

#if __has_include("troupe/pools/thread_pool.hpp")
#include "troupe/actors/async_result.hpp"
#include "troupe/pools/ctx_thread_pool.hpp"
#include "troupe/pools/imap_stream.hpp"
#include "troupe/pools/map_options.hpp"
#include "troupe/pools/pool_options.hpp"
#include "troupe/pools/process_pool.hpp"
#include "troupe/pools/progress.hpp"
#include "troupe/pools/this_worker.hpp"
#include "troupe/pools/thread_pool.hpp"
#include "troupe/pools/worker_stats.hpp"
#endif

#if __has_include("troupe/world/world.hpp")
#include "troupe/world/remote_ref.hpp"
#include "troupe/world/rpc_group.hpp"
#include "troupe/world/world.hpp"
#include "troupe/world/world_options.hpp"
#endif
