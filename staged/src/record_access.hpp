// What parallel_compute does to records that users cannot: make a slice's record (only the
// fields its stage reads, properties computed on read), and let the host compute.
#pragma once

#include "troupe/staged/record.hpp"

namespace troupe::staged::detail {

struct record_access {
  static record slice(std::shared_ptr<const schema> definition,
                      std::map<std::string, tensor> fields, std::map<std::string, tensor> cached) {
    return record{std::move(definition), std::move(fields), std::move(cached), true};
  }
  /// Runs `body` with `r` computing properties on read, as a host stage does.
  template <class F>
  static void computing(record& r, F&& body) {
    struct restore {
      record& r;
      bool was;
      ~restore() { r.computing_ = was; }
    } guard{r, r.computing_};
    r.computing_ = true;
    body();
  }
  /// Caches `value` under `name`, a property or an operation of a split MIXED property.
  static void cache(const record& r, const std::string& name, tensor value) {
    r.cache_.insert_or_assign(name, std::move(value));
  }
};

} // namespace troupe::staged::detail
