// One member of a world as its store holds it (member_registry.hpp): a light header, for the
// member actor's state, which keeps the records the store's news told it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace troupe::detail::etcd {

struct member_record {
  int rank = -1;
  std::string name;
  /// The incarnation's identity (the world's own: its node and member actor), opaque here.
  std::string incarnation;
  /// Where it listens, "host:port".
  std::string address;
  /// The devices it offers (world_options::devices).
  std::vector<std::string> devices;
  /// Whether it said it is leaving on purpose (its record goes next): no loss to report.
  bool left = false;
  /// The store's revision its record was made at: the older of two members has the lower one
  /// (0 where not known). Not part of the record's text.
  std::int64_t since = 0;

  /// The same record: `since` aside (a record read again is the one already known).
  friend bool operator==(const member_record& a, const member_record& b) {
    return a.rank == b.rank && a.name == b.name && a.incarnation == b.incarnation &&
           a.address == b.address && a.devices == b.devices && a.left == b.left;
  }
};

} // namespace troupe::detail::etcd
