// What etcd's JSON gateway speaks: keys and values in base64, 64-bit numbers as strings. Every
// reader here takes a document from a server not yet trusted: a missing or mistyped field is a
// network_error naming it, never a crash.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace troupe::detail::etcd {

std::string base64(std::string_view bytes);
/// Throws network_error naming `what` if `text` is not base64.
std::string from_base64(std::string_view text, std::string_view what);

/// The end of the range of every key that starts with `prefix` (etcd's range_end).
std::string prefix_end(std::string_view prefix);

/// Field `name` of `object` as a signed 64-bit number (the gateway writes them as strings;
/// absent means 0, as protobuf's JSON leaves out zeros).
std::int64_t number_field(const nlohmann::json& object, std::string_view name);
/// Field `name` of `object`, base64-decoded; absent means "".
std::string bytes_field(const nlohmann::json& object, std::string_view name);
/// Field `name` of `object` as a boolean; absent means false.
bool flag_field(const nlohmann::json& object, std::string_view name);
/// Field `name` of `object`, which must be an object itself.
const nlohmann::json& object_field(const nlohmann::json& object, std::string_view name);
/// Field `name` of `object` if it is an array, else an empty array (absent: no items).
const nlohmann::json& array_field(const nlohmann::json& object, std::string_view name);

} // namespace troupe::detail::etcd
