// Reads an ONNX model without its weights: every field of the file but the bytes of large
// initializers, which are skipped where they lie (never read, never copied). Sizes come from
// the initializers' dims and types; weights kept in external data files are never opened.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>

namespace troupe::detail {

/// Initializers of at most this many bytes keep their data: shape constants among them.
inline constexpr std::size_t kept_initializer_bytes = 512;

/// The model in `path`, its large initializers' data left out; invalid_argument if it is no
/// ONNX model.
onnx::ModelProto read_onnx_skeleton(const std::filesystem::path& path);
/// The same from a model's bytes.
onnx::ModelProto read_onnx_skeleton_bytes(const std::string& bytes);

} // namespace troupe::detail
