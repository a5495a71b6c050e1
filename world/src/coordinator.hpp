// Rank 0's part in the groups: the rendezvous of collective groups' shape checks and of groups
// of all members (their creation and barriers), and the tables of which member holds each
// paired value and service (machin's LUT manager). It
// holds the promises of members waiting at a rendezvous, and answers them all when the last
// arrives, or when a member the rendezvous waits for is lost.
#pragma once

#include "member_messages.hpp"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace troupe::detail {

/// lookup: who holds the key (a lost holder's key is peer_lost); holds: whether anyone does (and
/// who, as lookup answers; a lost holder's key is key_error).
enum class key_operation : std::uint8_t { add, remove, lookup, holds };

/// A key as messages name it: "paired value 'k'" or "service 'k'".
inline std::string key_what(key_table table, const std::string& key) {
  return (table == key_table::paired ? "paired value '" : "service '") + key + "'";
}

class coordinator {
public:
  /// Member `rank` arrived at the rendezvous `what` of `ranks` (a collective group's shape
  /// check), bringing `payload` (its signature). Its promise
  /// is answered when all have: with every member's payload in the order of `ranks`, if any
  /// brought one.
  void arrive(const std::string& what, const std::vector<int>& ranks, int rank,
              reply_promise promise, wire_bytes payload = {});

  /// Member `rank` arrived at the rendezvous `what` of the members present (a group that follows
  /// the world): those of `present` (rank 0's view now) when the first of them came. Met
  /// `once` (a group's creation: any later arrival, a member that joined since, passes at
  /// once) or anew each time (its barriers: an arrival that was not present at the start
  /// passes with the others). A member that had not arrived at one that failed hears it when
  /// it does.
  void arrive_present(const std::string& what, bool once, const std::vector<int>& present, int rank,
                      reply_promise promise);

  /// Adds, removes or looks up `key` in `table` of `group` for member `rank`.
  reply_result keys(key_operation op, key_table table, const std::string& group,
                    const std::string& key, int rank);

  /// A member was lost, or `left` on purpose (`why` says who, and how): fails every rendezvous
  /// that waits for it (one of the members present meets without a member that left), forgets
  /// its keys.
  void lost(int rank, const std::string& why, bool left);
  /// A lost member joined again, as a new process: rendezvous may wait for it again (its old
  /// keys stay orphaned until taken again).
  void returned(int rank);

  /// Answers every held promise with `why` (when rank 0 stops).
  void fail_all(const failure& why);

private:
  struct rendezvous {
    std::vector<int> ranks; // those it waits for
    std::map<int, reply_promise> arrived;
    std::map<int, wire_bytes> payloads;
    bool of_present = false; // arrive_present's: others may pass with it
    bool once = false;
  };
  /// Answers the rendezvous at `at` if everyone it waits for has arrived.
  void complete_if_whole(std::map<std::string, rendezvous>::iterator at);

  std::map<std::string, rendezvous> waiting_;
  std::set<std::string> met_once_; // rendezvous of the members present met once: passed now
  /// Members that had not arrived at a rendezvous of the members present when it failed, and
  /// why: told when they arrive.
  std::map<std::pair<std::string, int>, std::string> owed_failures_;
  std::map<std::tuple<key_table, std::string, std::string>, int> owners_;
  // Keys whose owner was lost, until someone takes them again: a lookup says who went (a
  // server whose host is gone is peer_lost naming the host, not a key never heard of).
  std::map<std::tuple<key_table, std::string, std::string>, int> orphaned_;
  std::map<int, std::string> gone_; // members lost, and how
};

} // namespace troupe::detail
