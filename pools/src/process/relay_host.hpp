// The pool's side of calls its worker processes make to actors of this process through handles
// that travelled to them (a task's argument, say): each relayed call finds its actor by number
// (travelled_actors.hpp), goes into its mailbox like any call, and its answer goes back on the
// worker's answer queue. Whoever reads a worker's reply queue hands its relayed calls here.
#pragma once

#include "process/worker_wire.hpp"

#include "troupe/queues/queue.hpp"

#include <memory>
#include <string>
#include <vector>

namespace troupe::detail {

/// Puts each call into its actor's mailbox (waiting for room as any caller would), or answers
/// at once why it cannot go there: every call is answered, whatever fails here. `worker` names
/// where the calls came from.
void relay_calls(std::vector<relay_call>& calls, const std::shared_ptr<queue<reply_batch>>& answers,
                 const std::string& worker) noexcept;

} // namespace troupe::detail
