#include "member_registry.hpp"

#include "troupe/actors/detail/result_state.hpp"
#include "troupe/actors/error.hpp"

#include <charconv>
#include <cstdio>

namespace troupe::detail::etcd {

namespace {

/// The most members one read of the store returns (a world of max_world_size, and room for
/// records that will be ignored).
constexpr std::int64_t read_margin = 64;

std::string text_of(const nlohmann::json& record, const char* field) {
  const auto found = record.find(field);
  if (found == record.end() || !found->is_string())
    throw std::invalid_argument(field);
  return found->get<std::string>();
}

std::vector<std::string> texts_of(const nlohmann::json& record, const char* field) {
  const auto found = record.find(field);
  if (found == record.end() || !found->is_array())
    throw std::invalid_argument(field);
  std::vector<std::string> texts;
  for (const auto& item : *found) {
    if (!item.is_string())
      throw std::invalid_argument(field);
    texts.push_back(item.get<std::string>());
  }
  return texts;
}

bool flag_of(const nlohmann::json& record, const char* field) {
  const auto found = record.find(field);
  return found != record.end() && found->is_boolean() && found->get<bool>();
}

} // namespace

member_registry::member_registry(registry_settings settings, registry_handlers handlers)
  : settings_{std::move(settings)}, handlers_{std::move(handlers)}, store_{settings_.store} {
  lease_ = std::make_unique<lease_keeper>(settings_.store, settings_.ttl, [this](std::string why) {
    tell("cut_off", [&] { handlers_.cut_off(why); });
  });
  const auto revision = read();
  watch_ = std::make_unique<watch>(
    settings_.store, members_prefix(), revision,
    watch_handlers{[this](const auto& changes) { take(changes); }, [this] { read(); }});
}

member_registry::~member_registry() {
  watch_.reset();
  lease_.reset();
}

std::string member_registry::members_prefix() const {
  return "/troupe/" + settings_.world + "/members/";
}

std::string member_registry::member_key(int rank) const {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%07d", rank); // key order is rank order
  return members_prefix() + digits;
}

std::string member_registry::name_key(const std::string& name) const {
  return "/troupe/" + settings_.world + "/names/" + name;
}

std::optional<int> member_registry::rank_of(std::string_view key) const {
  const auto prefix = members_prefix();
  if (!key.starts_with(prefix))
    return std::nullopt;
  const auto digits = key.substr(prefix.size());
  int rank = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  if (ec != std::errc{} || end != digits.data() + digits.size() || rank < 0 ||
      rank >= settings_.max_world_size)
    return std::nullopt;
  return rank;
}

// A record as the store holds it, if it has the shape of one at a rank of this world.
std::optional<member_record> member_registry::record_of(const key_value& item) {
  const auto rank = rank_of(item.key);
  if (rank && item.value.size() <= max_record_bytes) {
    const auto document = nlohmann::json::parse(item.value, nullptr, false);
    try {
      if (document.is_object())
        return member_record{*rank,
                             text_of(document, "name"),
                             text_of(document, "incarnation"),
                             text_of(document, "address"),
                             texts_of(document, "devices"),
                             flag_of(document, "left"),
                             item.create_revision};
    } catch (const std::invalid_argument&) {
    }
  }
  std::scoped_lock lock{mutex_};
  ++ignored_;
  return std::nullopt;
}

// The members as the store holds them now, told as changes against what this member knew (the
// first read, and again when the watch lost changes to a compaction); the revision read at.
std::int64_t member_registry::read() {
  const auto now = store_.prefix(members_prefix(), settings_.max_world_size + read_margin);
  std::map<int, member_record> found;
  for (const auto& item : now.items)
    if (auto record = record_of(item))
      found.emplace(record->rank, std::move(*record));
  std::map<int, member_record> known;
  {
    std::scoped_lock lock{mutex_};
    known = members_;
  }
  for (const auto& [rank, record] : known)
    if (!found.contains(rank))
      forget(rank, 0); // when is compacted away
  for (const auto& [rank, record] : found)
    learn(record);
  return now.revision;
}

// The watch's changes, in the store's order: a record that appears joined, one that goes lost.
void member_registry::take(const std::vector<change>& changes) {
  for (const auto& change : changes) {
    if (change.deleted) {
      if (const auto rank = rank_of(change.item.key))
        forget(*rank, change.item.mod_revision);
    } else if (auto record = record_of(change.item)) {
      learn(*record);
    }
  }
}

// A record seen in the store: told as joined unless it is this member's or known already (a
// change seen again after a read is not a second join); the same incarnation's record saying it
// leaves is told as left.
void member_registry::learn(const member_record& record) {
  bool leaves = false;
  {
    std::scoped_lock lock{mutex_};
    auto& known = members_[record.rank];
    if (known == record)
      return;
    leaves = record.left && !known.left && known.incarnation == record.incarnation;
    known = record;
    if (record.rank == own_rank_)
      return;
  }
  if (leaves)
    tell("left", [&] { handlers_.left(record); });
  else
    tell("joined", [&] { handlers_.joined(record); });
}

void member_registry::forget(int rank, std::int64_t revision) {
  member_record gone;
  {
    std::scoped_lock lock{mutex_};
    const auto found = members_.find(rank);
    if (found == members_.end())
      return;
    gone = std::move(found->second);
    members_.erase(found);
    if (revision > 0)
      losses_.push_front({gone, revision});
    if (losses_.size() > max_losses_kept)
      losses_.pop_back();
    if (rank == own_rank_)
      return;
  }
  tell("lost", [&] { handlers_.lost(gone); });
}

template <class Handler>
void member_registry::tell(const char* which, Handler handler) noexcept {
  try {
    handler();
  } catch (...) {
    report_escaped_exception(std::string{"the member registry's "} + which + " handler");
  }
}

std::string member_registry::document_of(const member_record& record) const {
  nlohmann::json value{{"name", record.name},
                       {"incarnation", record.incarnation},
                       {"address", record.address},
                       {"devices", record.devices}};
  if (record.left)
    value["left"] = true;
  return value.dump();
}

bool member_registry::try_claim(member_record& record) {
  record.since = store_.create_all({{member_key(record.rank), document_of(record)},
                                    {name_key(record.name), std::to_string(record.rank)}},
                                   lease_->id());
  return record.since != 0;
}

void member_registry::leave() {
  if (lease_->lost())
    return;
  member_record own;
  {
    std::scoped_lock lock{mutex_};
    const auto found = members_.find(own_rank_);
    if (found == members_.end())
      return;
    found->second.left = true;
    own = found->second;
  }
  // Told within a third of the TTL or not at all: a member stopping does not wait on a store
  // that does not answer (the others then lose it, which is what it is to them).
  auto settings = settings_.store;
  settings.request_timeout =
    std::min(settings.request_timeout,
             std::chrono::duration_cast<std::chrono::milliseconds>(settings_.ttl) / 3);
  client{std::move(settings)}.put(member_key(own.rank), document_of(own), lease_->id());
}

std::int64_t member_registry::lease() const { return lease_->id(); }

std::vector<member_loss> member_registry::losses() const {
  std::scoped_lock lock{mutex_};
  return {losses_.begin(), losses_.end()};
}

int member_registry::claim(member_record record, int first_free) {
  const bool any = record.rank < 0;
  if (!any && record.rank >= settings_.max_world_size)
    throw state_error("rank " + std::to_string(record.rank) + " is outside the world (its " +
                      "largest size is " + std::to_string(settings_.max_world_size) + ")");
  const int first = any ? first_free : record.rank;
  const int last = any ? settings_.max_world_size - 1 : record.rank;
  for (int rank = first; rank <= last; ++rank) {
    record.rank = rank;
    set_own_rank(rank); // before the watch can show this member its own record
    if (try_claim(record)) {
      learn(record); // in members() at once, not when the watch brings it back
      return rank;
    }
    set_own_rank(-1);
    if (const auto holder = store_.get(name_key(record.name)))
      throw state_error("the name '" + record.name + "' is held in the world's store by rank " +
                        holder->value);
  }
  if (!any)
    throw rank_held("rank " + std::to_string(record.rank) +
                    " is held in the world's store by another member");
  throw state_error("the world is full: every rank from " + std::to_string(first_free) + " to " +
                    std::to_string(settings_.max_world_size - 1) + " is held");
}

void member_registry::set_own_rank(int rank) {
  std::scoped_lock lock{mutex_};
  own_rank_ = rank;
}

std::vector<member_record> member_registry::members() const {
  std::scoped_lock lock{mutex_};
  std::vector<member_record> all;
  for (const auto& [rank, record] : members_)
    all.push_back(record);
  return all;
}

std::optional<member_record> member_registry::member(int rank) const {
  std::scoped_lock lock{mutex_};
  const auto found = members_.find(rank);
  return found == members_.end() ? std::nullopt : std::optional{found->second};
}

std::uint64_t member_registry::ignored() const {
  std::scoped_lock lock{mutex_};
  return ignored_;
}

} // namespace troupe::detail::etcd
