// The mapper family (pytato's transform module): objects that walk a DAG, dispatching on each
// node's kind to a method of their own.
//
//   mapper<R, Extra...>            rec(n, extra...) calls map_<kind>(n, extra...); no memo; a kind
//                                  without a method throws unsupported_node.
//   cached_mapper<R, Extra...>     maps each node once, keyed by structure (and by
//   extra_key(extra...)
//                                  when there are extra arguments; without an override:
//                                  state_error). err_on_collision: two distinct but equal nodes
//                                  under one key throw cache_collision.
//   copy_mapper                    rebuilds a node only if a child changed, and hash-conses
//   results:
//                                  equal results are one instance. err_on_created_duplicate: a new
//                                  node equal to the one it replaces throws created_duplicate.
//   copy_mapper_with_extra_args<Extra...>  copies, passing the extra arguments down to the
//                                  children (pytato's CopyMapperWithExtraArgs).
//   edge_cached_mapper             rebuilds each node once, each child replaced by
//                                  handle_edge(parent, child): called once per edge, not per
//                                  node (pytato's EdgeCachedMapper).
//   combine_mapper<R>              maps a node to combine(its children's results).
//   walk_mapper<Extra...>          visit(n) false skips the subtree; post_visit after the children.
//   cached_walk_mapper<Extra...>   the same, each key once.
// Children come in one fixed order (node::children()), so every walk is deterministic.
#pragma once

#include "troupe/graph/errors.hpp"
#include "troupe/graph/node.hpp"

#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

namespace troupe::graph {

/// Every kind of node, as X(kind): what the mappers dispatch on.
#define TROUPE_GRAPH_KINDS(X)                                                                      \
  X(placeholder)                                                                                   \
  X(size_param)                                                                                    \
  X(data)                                                                                          \
  X(elementwise)                                                                                   \
  X(reduce)                                                                                        \
  X(stack)                                                                                         \
  X(concatenate) X(reshape) X(transpose) X(roll) X(einsum) X(outputs) X(send) X(recv) X(index)

/// Walks a DAG, dispatching on each node's kind to a method of its own (pytato's Mapper): `rec(n,
/// extra...)` calls `map_<kind>(n, extra...)`; nothing is memoised; a kind without a method throws
/// unsupported_node.
template <class R, class... Extra>
class mapper {
public:
  virtual ~mapper() = default;

  /// The same as rec(n, extra...).
  R operator()(const node_ptr& n, Extra... extra) { return rec(n, extra...); }

  /// What `n` maps to: map_<kind>(n, extra...) for its kind.
  virtual R rec(const node_ptr& n, Extra... extra) {
    if (!n)
      throw invalid_argument("mapper: a null node");
    switch (n->what()) {
#define TROUPE_GRAPH_DISPATCH(k)                                                                   \
  case kind::k: return map_##k(n, extra...);
      TROUPE_GRAPH_KINDS(TROUPE_GRAPH_DISPATCH)
#undef TROUPE_GRAPH_DISPATCH
    }
    return unsupported(n);
  }

protected:
  // map_<kind>(n, extra...): what a node of that kind maps to; override those your mapper
  // handles (the others throw unsupported_node).
#define TROUPE_GRAPH_METHOD(k)                                                                     \
  virtual R map_##k(const node_ptr& n, Extra...) { return unsupported(n); }
  TROUPE_GRAPH_KINDS(TROUPE_GRAPH_METHOD)
#undef TROUPE_GRAPH_METHOD

  /// Throws unsupported_node naming `n`'s kind.
  [[noreturn]] R unsupported(const node_ptr& n) const {
    throw unsupported_node(std::string{"this mapper has no method for "} + kind_name(n->what()) +
                           " nodes");
  }
};

/// A mapper that maps each node once, keyed by structure (and by extra_key(extra...) when there
/// are extra arguments); with `err_on_collision`, two distinct but equal nodes under one key
/// throw cache_collision (pytato's CachedMapper).
template <class R, class... Extra>
class cached_mapper : public mapper<R, Extra...> {
public:
  /// A mapper with an empty cache.
  explicit cached_mapper(bool err_on_collision = false) : err_on_collision_(err_on_collision) {}

  /// What `n` maps to, from the cache when a node equal to it was mapped before.
  R rec(const node_ptr& n, Extra... extra) override {
    auto key = std::pair{n, extra_key(extra...)};
    if (auto at = cache_.find(key); at != cache_.end()) {
      if (err_on_collision_ && at->first.first != n)
        throw cache_collision("cache collision: two distinct but equal " +
                              std::string{kind_name(n->what())} + " nodes under one key");
      return at->second;
    }
    R result = mapper<R, Extra...>::rec(n, extra...);
    cache_.emplace(std::move(key), result);
    return result;
  }

protected:
  /// What the extra arguments add to the cache key; override it when there are any.
  virtual std::string extra_key(Extra...) const {
    if constexpr (sizeof...(Extra) != 0)
      throw state_error("cached_mapper: extra arguments need an extra_key override");
    return {};
  }

private:
  using key_type = std::pair<node_ptr, std::string>;
  struct key_hash {
    std::size_t operator()(const key_type& k) const noexcept {
      return k.first->hash() ^ (std::hash<std::string>{}(k.second) << 1);
    }
  };
  struct key_equal {
    bool operator()(const key_type& a, const key_type& b) const {
      return a.second == b.second && node_equal{}(a.first, b.first);
    }
  };
  bool err_on_collision_;
  std::unordered_map<key_type, R, key_hash, key_equal> cache_;
};

/// Rebuilds a DAG: a node is made again only if a child changed, and equal results are one
/// instance (pytato's CopyMapper). With `err_on_created_duplicate`, a new node equal to the one
/// it replaces throws created_duplicate. Override the map_<kind> methods to change nodes.
class copy_mapper : public cached_mapper<node_ptr> {
public:
  /// A copy mapper; the flags as cached_mapper's and above.
  explicit copy_mapper(bool err_on_collision = false, bool err_on_created_duplicate = false)
    : cached_mapper(err_on_collision), err_on_created_duplicate_(err_on_created_duplicate) {}

  /// `n` copied: the same instance for nodes equal in structure.
  node_ptr rec(const node_ptr& n) override;

protected:
  // map_<kind>(n): `n` copied with its children mapped (copy(n)); override to change a kind.
#define TROUPE_GRAPH_COPY(k)                                                                       \
  node_ptr map_##k(const node_ptr& n) override { return copy(n); }
  TROUPE_GRAPH_KINDS(TROUPE_GRAPH_COPY)
#undef TROUPE_GRAPH_COPY

  /// `n` with its children mapped: `n` itself when none changed.
  node_ptr copy(const node_ptr& n);

private:
  bool err_on_created_duplicate_;
  node_set made_; // every result, so equal results are one instance
};

/// A copy mapper that passes extra arguments down to the children (pytato's
/// CopyMapperWithExtraArgs); override extra_key() to say how they key the cache.
template <class... Extra>
class copy_mapper_with_extra_args : public cached_mapper<node_ptr, Extra...> {
protected:
  // map_<kind>(n, extra...): `n` with its children mapped with the same extra arguments.
#define TROUPE_GRAPH_COPY_EXTRA(k)                                                                 \
  node_ptr map_##k(const node_ptr& n, Extra... extra) override { return copy(n, extra...); }
  TROUPE_GRAPH_KINDS(TROUPE_GRAPH_COPY_EXTRA)
#undef TROUPE_GRAPH_COPY_EXTRA

  /// `n` with its children mapped with the same extra arguments: `n` itself when none changed.
  node_ptr copy(const node_ptr& n, Extra... extra) {
    std::vector<node_ptr> children;
    bool changed = false;
    for (const auto& child : n->children()) {
      children.push_back(this->rec(child, extra...));
      changed = changed || children.back() != child;
    }
    return changed ? n->with_children(std::move(children)) : n;
  }
};

/// Rebuilds each node once, each child replaced by handle_edge(parent, child), which is called
/// once per edge, not per node (pytato's EdgeCachedMapper).
class edge_cached_mapper : public cached_mapper<node_ptr> {
protected:
  /// What takes `child`'s place under `parent`.
  virtual node_ptr handle_edge(const node_ptr& parent, const node_ptr& child) = 0;

  // map_<kind>(n): `n` with each child replaced by handle_edge(n, child).
#define TROUPE_GRAPH_EDGES(k)                                                                      \
  node_ptr map_##k(const node_ptr& n) override { return rebuild(n); }
  TROUPE_GRAPH_KINDS(TROUPE_GRAPH_EDGES)
#undef TROUPE_GRAPH_EDGES

private:
  node_ptr rebuild(const node_ptr& n) {
    std::vector<node_ptr> children;
    bool changed = false;
    for (const auto& child : n->children()) {
      children.push_back(handle_edge(n, child));
      changed = changed || children.back() != child;
    }
    return changed ? n->with_children(std::move(children)) : n;
  }
};

/// Maps a node to combine(node, what its children map to) (pytato's CombineMapper).
template <class R>
class combine_mapper : public cached_mapper<R> {
protected:
  /// What a node maps to, from what its children map to (in children() order).
  virtual R combine(const node_ptr& n, std::vector<R> children) = 0;

  // map_<kind>(n): combine(n, its children mapped).
#define TROUPE_GRAPH_COMBINE(k)                                                                    \
  R map_##k(const node_ptr& n) override {                                                          \
    std::vector<R> mapped;                                                                         \
    for (const auto& child : n->children())                                                        \
      mapped.push_back(this->rec(child));                                                          \
    return combine(n, std::move(mapped));                                                          \
  }
  TROUPE_GRAPH_KINDS(TROUPE_GRAPH_COMBINE)
#undef TROUPE_GRAPH_COMBINE
};

/// Visits a DAG depth first: visit(n) false skips the subtree; post_visit(n) runs after the
/// children (pytato's WalkMapper). A node reached twice is visited twice.
template <class... Extra>
class walk_mapper {
public:
  virtual ~walk_mapper() = default;

  /// The same as rec(n, extra...).
  void operator()(const node_ptr& n, Extra... extra) { rec(n, extra...); }

  /// Visits `n`, then (unless visit() said not to) its children and post_visit().
  virtual void rec(const node_ptr& n, Extra... extra) {
    if (!visit(n, extra...))
      return;
    for (const auto& child : n->children())
      rec(child, extra...);
    post_visit(n, extra...);
  }

protected:
  /// False skips `n`'s children and post_visit.
  virtual bool visit(const node_ptr&, Extra...) { return true; }
  /// Runs after `n`'s children were visited.
  virtual void post_visit(const node_ptr&, Extra...) {}
};

/// A walk that visits each node (with each extra_key) once (pytato's CachedWalkMapper).
template <class... Extra>
class cached_walk_mapper : public walk_mapper<Extra...> {
public:
  /// Visits `n` unless a node equal to it was visited before.
  void rec(const node_ptr& n, Extra... extra) override {
    if (!visited_.insert(cache_key(n, extra...)).second)
      return;
    walk_mapper<Extra...>::rec(n, extra...);
  }

protected:
  /// What makes a visit the same as an earlier one: the node by structure, and the extra
  /// arguments as extra_key() spells them (override it when there are any).
  virtual std::string extra_key(Extra...) const {
    if constexpr (sizeof...(Extra) != 0)
      throw state_error("cached_walk_mapper: extra arguments need an extra_key override");
    return {};
  }

private:
  struct key_hash {
    std::size_t operator()(const std::pair<node_ptr, std::string>& k) const noexcept {
      return k.first->hash() ^ (std::hash<std::string>{}(k.second) << 1);
    }
  };
  struct key_equal {
    bool operator()(const std::pair<node_ptr, std::string>& a,
                    const std::pair<node_ptr, std::string>& b) const {
      return a.second == b.second && node_equal{}(a.first, b.first);
    }
  };
  std::pair<node_ptr, std::string> cache_key(const node_ptr& n, Extra... extra) const {
    return {n, extra_key(extra...)};
  }
  std::unordered_set<std::pair<node_ptr, std::string>, key_hash, key_equal> visited_;
};

} // namespace troupe::graph
