// execute_distributed_partition: receives posted first, each part run when its inputs are in,
// its sends started as it finishes; every array held only as long as something still needs it.
#include "troupe/graph/distributed.hpp"

#include <list>
#include <optional>
#include <set>

namespace troupe::graph {

namespace {

/// A receive posted up front: its buffer and the handle of the message coming into it.
struct incoming {
  xt::xarray<double> buffer;
  std::optional<recv_handle> handle;
};

/// A send on its way, and the array it reads, freed once it is done.
struct outgoing {
  xt::xarray<double> data;
  std::optional<collective_handle> handle;
};

/// Waits for every message still on its way, ignoring how each ends: their buffers must live
/// until then, and each ends within the group's timeout.
void settle(std::list<outgoing>& sends, std::map<std::string, incoming>& receives) {
  for (auto& send : sends)
    try {
      send.handle->wait();
    } catch (...) {
    }
  for (auto& [name, r] : receives)
    try {
      r.handle->wait();
    } catch (...) {
    }
}

/// Drops the arrays of the sends that are done (rethrowing the error of one that failed).
void drop_finished(std::list<outgoing>& sends) {
  for (auto it = sends.begin(); it != sends.end();)
    if (it->handle->ready()) {
      it->handle->wait();
      it = sends.erase(it);
    } else {
      ++it;
    }
}

/// One execution on this rank: the values in hand by name, the messages on their way.
class distributed_run {
public:
  distributed_run(const distributed_graph_partition& partition, collective_group& group,
                  tensor_map inputs)
    : partition_(partition), group_(group), context_(std::move(inputs)),
      kept_(partition.overall_output_names.begin(), partition.overall_output_names.end()) {
    for (auto pid : partition.toposorted_part_ids)
      for (const auto& name : partition.parts.at(pid).all_input_names())
        last_reader_[name] = pid;
  }

  tensor_map run() {
    try {
      post_receives();
      for (auto pid : partition_.toposorted_part_ids)
        run_part(partition_.parts.at(pid));
      for (auto& send : sends_)
        send.handle->wait();
      for (auto& [name, r] : receives_)
        r.handle->wait(); // a receive no part read still ends here
    } catch (...) {
      settle(sends_, receives_); // a part failed, or a message: the others still use buffers
      throw;
    }
    tensor_map results;
    for (const auto& name : partition_.overall_output_names)
      results.emplace(name, context_.at(name));
    return results;
  }

private:
  void post_receives() {
    for (const auto& [pid, part] : partition_.parts)
      for (const auto& [name, info] : part.name_to_recv_node) {
        auto& r = receives_[name];
        r.buffer =
          xt::zeros<double>(std::vector<std::size_t>(info.shape.begin(), info.shape.end()));
        r.handle.emplace(group_.irecv(r.buffer, info.src, static_cast<int>(info.int_tag)));
      }
  }

  void run_part(const distributed_graph_part& part) {
    for (const auto& name : part.partition_input_names)
      if (auto at = receives_.find(name); at != receives_.end() && !context_.contains(name)) {
        at->second.handle->wait();
        context_.emplace(name, std::move(at->second.buffer)); // the message is in: no writer
      }
    std::map<std::string, node_ptr> named;
    for (const auto& name : part.output_names)
      named.emplace(name, partition_.name_to_output.at(name));
    for (auto& [name, value] : evaluate(make_outputs(named), context_))
      context_.insert_or_assign(name, std::move(value));
    for (const auto& [name, targets] : part.name_to_send_nodes)
      send(name, targets);
    for (const auto& name : part.all_input_names())
      if (last_reader_.at(name) == part.pid && !kept_.contains(name))
        context_.erase(name);
    drop_finished(sends_);
  }

  /// Starts the sends of `name`; the last takes the array itself when nothing here reads it
  /// after.
  void send(const std::string& name, const std::vector<send_info>& targets) {
    const bool read_here = kept_.contains(name) || last_reader_.contains(name);
    for (std::size_t k = 0; k < targets.size(); ++k) {
      auto& value = context_.at(name);
      auto& out = sends_.emplace_back(
        outgoing{k + 1 == targets.size() && !read_here ? std::move(value) : value, std::nullopt});
      out.handle.emplace(
        group_.isend(out.data, targets[k].dest, static_cast<int>(targets[k].int_tag)));
    }
    if (!read_here)
      context_.erase(name);
  }

  const distributed_graph_partition& partition_;
  collective_group& group_;
  std::map<std::string, incoming> receives_; // nodes of a map stay where they are
  std::list<outgoing> sends_; // likewise: a send reads its array where it is
  tensor_map context_;
  std::map<std::string, part_id> last_reader_; // each value goes once its last reader has run
  const std::set<std::string> kept_; // the outputs stay
};

} // namespace

tensor_map execute_distributed_partition(const distributed_graph_partition& partition,
                                         collective_group& group, tensor_map inputs) {
  return distributed_run{partition, group, std::move(inputs)}.run();
}

} // namespace troupe::graph
