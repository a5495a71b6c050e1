// What graph/ throws: troupe errors, each naming what was wrong.
#pragma once

#include "troupe/actors/error.hpp"

namespace troupe::graph {

/// A mapper met a kind of node it has no method for (pytato's UnsupportedArrayError).
class unsupported_node : public troupe::invalid_argument {
public:
  using invalid_argument::invalid_argument;
};

/// A placeholder's name is reserved (troupe's own begin with "_pt_"), or one DAG has two
/// placeholders of one name that differ in shape or dtype (pytato's NameClashError).
class name_clash_error : public troupe::invalid_argument {
public:
  using invalid_argument::invalid_argument;
};

/// A cached mapper met two distinct but equal nodes under one key (err_on_collision).
class cache_collision : public troupe::state_error {
public:
  using state_error::state_error;
};

/// A copy mapper made a new node equal to the one it replaced (err_on_created_duplicate).
class created_duplicate : public troupe::state_error {
public:
  using state_error::state_error;
};

/// Cutting a DAG into parts made the parts depend on each other in a circle.
class partition_induced_cycle : public troupe::invalid_argument {
public:
  using invalid_argument::invalid_argument;
};

/// A dependency graph (of parts, or of communication) has a cycle.
class cycle_error : public troupe::invalid_argument {
public:
  using invalid_argument::invalid_argument;
};

/// Communication the distributed partition cannot do (a rank sending to itself).
class not_supported : public troupe::invalid_argument {
public:
  using invalid_argument::invalid_argument;
};

/// Two sends, or two receives, with one (source, destination, tag) (pytato's DuplicateSendError,
/// DuplicateRecvError).
class duplicate_send : public troupe::invalid_argument {
public:
  using invalid_argument::invalid_argument;
};
class duplicate_recv : public troupe::invalid_argument {
public:
  using invalid_argument::invalid_argument;
};

/// A receive no rank sends, or a send no rank receives (MissingSendError, MissingRecvError).
class missing_send : public troupe::invalid_argument {
public:
  using invalid_argument::invalid_argument;
};
class missing_recv : public troupe::invalid_argument {
public:
  using invalid_argument::invalid_argument;
};

} // namespace troupe::graph
