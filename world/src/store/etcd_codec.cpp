#include "etcd_codec.hpp"

#include "troupe/actors/error.hpp"

#include <openssl/evp.h>

#include <charconv>

namespace troupe::detail::etcd {

namespace {

[[noreturn]] void malformed(std::string_view what) {
  throw network_error("etcd answered with a malformed " + std::string{what});
}

const nlohmann::json* field(const nlohmann::json& object, std::string_view name) {
  if (!object.is_object())
    malformed("document (an object expected around '" + std::string{name} + "')");
  const auto found = object.find(name);
  return found == object.end() ? nullptr : &*found;
}

} // namespace

std::string base64(std::string_view bytes) {
  std::string text(4 * ((bytes.size() + 2) / 3), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()),
                                      reinterpret_cast<const unsigned char*>(bytes.data()),
                                      static_cast<int>(bytes.size()));
  text.resize(static_cast<std::size_t>(written));
  return text;
}

std::string from_base64(std::string_view text, std::string_view what) {
  if (text.size() % 4 != 0)
    malformed(std::string{what} + " (not base64)");
  std::string bytes(3 * (text.size() / 4), '\0');
  const int written = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                      reinterpret_cast<const unsigned char*>(text.data()),
                                      static_cast<int>(text.size()));
  if (written < 0)
    malformed(std::string{what} + " (not base64)");
  // EVP_DecodeBlock counts the padding's bytes as decoded zeros.
  std::size_t padding = 0;
  for (auto it = text.rbegin(); it != text.rend() && *it == '=' && padding < 2; ++it)
    ++padding;
  bytes.resize(static_cast<std::size_t>(written) - padding);
  return bytes;
}

std::string prefix_end(std::string_view prefix) {
  std::string end{prefix};
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0'); // every key: etcd's "\0" range end
}

std::int64_t number_field(const nlohmann::json& object, std::string_view name) {
  const auto* value = field(object, name);
  if (value == nullptr)
    return 0;
  if (value->is_number_integer())
    return value->get<std::int64_t>();
  if (!value->is_string())
    malformed("number '" + std::string{name} + "'");
  const auto& text = value->get_ref<const std::string&>();
  std::int64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc{} || end != text.data() + text.size())
    malformed("number '" + std::string{name} + "'");
  return number;
}

std::string bytes_field(const nlohmann::json& object, std::string_view name) {
  const auto* value = field(object, name);
  if (value == nullptr)
    return {};
  if (!value->is_string())
    malformed("field '" + std::string{name} + "'");
  return from_base64(value->get_ref<const std::string&>(), "field '" + std::string{name} + "'");
}

bool flag_field(const nlohmann::json& object, std::string_view name) {
  const auto* value = field(object, name);
  if (value == nullptr)
    return false;
  if (!value->is_boolean())
    malformed("flag '" + std::string{name} + "'");
  return value->get<bool>();
}

const nlohmann::json& object_field(const nlohmann::json& object, std::string_view name) {
  const auto* value = field(object, name);
  if (value == nullptr || !value->is_object())
    malformed("document (no '" + std::string{name} + "' in it)");
  return *value;
}

const nlohmann::json& array_field(const nlohmann::json& object, std::string_view name) {
  static const nlohmann::json no_items = nlohmann::json::array();
  const auto* value = field(object, name);
  if (value == nullptr)
    return no_items;
  if (!value->is_array())
    malformed("list '" + std::string{name} + "'");
  return *value;
}

} // namespace troupe::detail::etcd
