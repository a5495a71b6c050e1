// Everything troupe offers, in one include.
#pragma once

#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/serialization.hpp"
#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/assigner/assigner.hpp"
#include "troupe/assigner/devices.hpp"
#include "troupe/assigner/placement_loss.hpp"
#include "troupe/pools/async_result.hpp"
#include "troupe/queues/queue.hpp"
#include "troupe/queues/shared_tensor.hpp"
#include "troupe/queues/shm_segment.hpp"
#include "troupe/pools/ctx_thread_pool.hpp"
#include "troupe/pools/imap_stream.hpp"
#include "troupe/pools/pool_options.hpp"
#include "troupe/pools/thread_pool.hpp"
