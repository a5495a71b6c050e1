#include "troupe/actors/tls_options.hpp"

#include "troupe/actors/error.hpp"

#include <cstdlib>
#include <utility>

namespace troupe {

namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

} // namespace

std::optional<tls_options> tls_options::from_environment() {
  tls_options tls{variable("TROUPE_TLS_CERT"), variable("TROUPE_TLS_KEY"),
                  variable("TROUPE_TLS_CA"), variable("TROUPE_TLS_PASSPHRASE")};
  if (tls.certificate.empty() && tls.key.empty() && tls.ca_file.empty())
    return std::nullopt;
  std::string missing;
  for (const auto& [value, name] :
       {std::pair{&tls.certificate, "TROUPE_TLS_CERT"}, std::pair{&tls.key, "TROUPE_TLS_KEY"},
        std::pair{&tls.ca_file, "TROUPE_TLS_CA"}})
    if (value->empty())
      missing += (missing.empty() ? "" : ", ") + std::string{name};
  if (!missing.empty())
    throw invalid_argument("TLS from the environment needs " + missing +
                           " set too, beside the TROUPE_TLS_ variables that are");
  return tls;
}

} // namespace troupe
