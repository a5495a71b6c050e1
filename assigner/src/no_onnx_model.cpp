// model_from_onnx in a build of troupe without ONNX (TROUPE_WITH_ONNX off): every call says so.
#include "troupe/assigner/onnx_model.hpp"

#include "troupe/actors/error.hpp"

namespace troupe {

namespace {

[[noreturn]] void no_onnx_reader() {
  throw invalid_argument("model_from_onnx: this build of troupe has no ONNX reader (configure it "
                         "with TROUPE_WITH_ONNX=ON, which needs libonnx-dev)");
}

} // namespace

onnx_model model_from_onnx(const std::filesystem::path&, const onnx_options&) { no_onnx_reader(); }

onnx_model model_from_onnx_bytes(const std::string&, const onnx_options&) { no_onnx_reader(); }

bool onnx_available() noexcept { return false; }

} // namespace troupe
