#include "soft_cache.hpp"

#include "troupe/staged/disk_cache.hpp"

#include "hdf5_file.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace troupe::staged {

namespace {

using clock_type = std::chrono::steady_clock;
using values_ptr = std::shared_ptr<const xt::xarray<double>>;

class soft_cache {
public:
  ~soft_cache() {
    {
      std::lock_guard guard{mutex_};
      stopping_ = true;
    }
    wake_.notify_all();
    if (cleaner_.joinable())
      cleaner_.join();
  }

  values_ptr load(const file_ref& where, const shape& dims) {
    const auto key = where.file + '\n' + where.dataset;
    {
      std::lock_guard guard{mutex_};
      auto& e = entries_[key];
      if (auto alive = e.weak.lock()) {
        keep(e, alive);
        return alive;
      }
    }
    for (const auto& [id, callback] : callbacks())
      callback(where);
    values_ptr values =
      std::make_shared<const xt::xarray<double>>(detail::read_dataset(where, dims));
    std::lock_guard guard{mutex_};
    auto& e = entries_[key];
    e.weak = values;
    keep(e, values);
    return values;
  }

  void set_ttl(std::optional<clock_type::duration> ttl) {
    std::lock_guard guard{mutex_};
    ttl_ = ttl;
    if (!ttl_)
      for (auto& [key, e] : entries_)
        e.strong.reset();
    wake_.notify_all();
  }

  std::size_t subscribe(std::function<void(const file_ref&)> callback) {
    std::lock_guard guard{mutex_};
    callbacks_.emplace_back(++last_id_, std::move(callback));
    return last_id_;
  }

  void unsubscribe(std::size_t id) {
    std::lock_guard guard{mutex_};
    std::erase_if(callbacks_, [id](const auto& each) { return each.first == id; });
  }

private:
  struct entry {
    std::weak_ptr<const xt::xarray<double>> weak;
    values_ptr strong; // until `expires`
    clock_type::time_point expires;
  };

  std::vector<std::pair<std::size_t, std::function<void(const file_ref&)>>> callbacks() {
    std::lock_guard guard{mutex_};
    return callbacks_; // called without the lock: a callback may read other tensors
  }

  /// Holds `values` for the time to live from now (mutex held).
  void keep(entry& e, const values_ptr& values) {
    if (!ttl_)
      return;
    e.strong = values;
    e.expires = clock_type::now() + *ttl_;
    if (!cleaner_.joinable())
      cleaner_ = std::thread{[this] { clean(); }};
    wake_.notify_all();
  }

  void clean() {
    std::unique_lock lock{mutex_};
    while (!stopping_) {
      const auto now = clock_type::now();
      for (auto it = entries_.begin(); it != entries_.end();) {
        if (it->second.strong && it->second.expires <= now)
          it->second.strong.reset();
        it = it->second.strong || !it->second.weak.expired() ? std::next(it) : entries_.erase(it);
      }
      if (ttl_)
        wake_.wait_for(lock, *ttl_ / 2);
      else
        wake_.wait(lock);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, entry> entries_;
  std::optional<clock_type::duration> ttl_ = std::chrono::seconds{2};
  std::vector<std::pair<std::size_t, std::function<void(const file_ref&)>>> callbacks_;
  std::size_t last_id_ = 0;
  bool stopping_ = false;
  std::thread cleaner_;
};

soft_cache& cache() {
  static soft_cache instance;
  return instance;
}

} // namespace

std::shared_ptr<const xt::xarray<double>> detail::load_cached(const file_ref& where,
                                                              const shape& dims) {
  return cache().load(where, dims);
}

load_subscription::~load_subscription() {
  if (id_ != 0)
    cache().unsubscribe(id_);
}

load_subscription on_load_into_memory(std::function<void(const file_ref&)> callback) {
  return load_subscription{cache().subscribe(std::move(callback))};
}

void set_cache_ttl(std::optional<std::chrono::duration<double>> ttl) {
  if (ttl)
    cache().set_ttl(std::chrono::duration_cast<clock_type::duration>(*ttl));
  else
    cache().set_ttl(std::nullopt);
}

std::set<std::string> get_cache_files(const tensor& t) {
  const auto files = t.files();
  return {files.begin(), files.end()};
}

std::set<std::string> get_cache_files(const record& r) {
  std::set<std::string> files;
  for (const auto& name : r.definition().fields())
    files.merge(get_cache_files(r.get(name)));
  for (const auto& name : r.cached())
    files.merge(get_cache_files(r.get(name)));
  return files;
}

} // namespace troupe::staged
