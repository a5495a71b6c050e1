// Large messages between a pool and its nodes travel in pieces of at most 4 MiB: CAF's network
// layer has no flow control, and one huge message would hold the connection (heartbeats
// included) until it is through. Pieces of one message follow each other on one connection, so
// they arrive in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

namespace troupe::detail {

inline constexpr std::size_t max_piece_bytes = std::size_t{4} << 20;

/// Calls `send(index, count, piece)` for each piece of `bytes`, in order.
template <class Send>
void send_in_pieces(std::span<const std::byte> bytes, Send&& send) {
  const auto count = static_cast<std::uint32_t>(
    bytes.empty() ? 1 : (bytes.size() + max_piece_bytes - 1) / max_piece_bytes);
  for (std::uint32_t index = 0; index < count; ++index) {
    const auto from = static_cast<std::size_t>(index) * max_piece_bytes;
    const auto size = std::min(max_piece_bytes, bytes.size() - from);
    std::vector<char> piece(size);
    if (size != 0)
      std::memcpy(piece.data(), bytes.data() + from, size);
    send(index, count, std::move(piece));
  }
}

/// Puts pieces back together. A piece out of order, or larger than a piece may be, is a
/// protocol violation: add() then returns nullopt and broken() turns true.
class reassembler {
public:
  std::optional<std::vector<char>> add(std::uint32_t index, std::uint32_t count,
                                       std::vector<char>&& piece) {
    if (index != next_ || count == 0 || index >= count || piece.size() > max_piece_bytes ||
        (index > 0 && count != count_)) {
      broken_ = true;
      return std::nullopt;
    }
    if (index == 0) {
      whole_ = std::move(piece);
      count_ = count;
    } else {
      whole_.insert(whole_.end(), piece.begin(), piece.end());
    }
    if (++next_ < count)
      return std::nullopt;
    next_ = 0;
    return std::move(whole_);
  }
  bool broken() const noexcept { return broken_; }

private:
  std::vector<char> whole_;
  std::uint32_t next_ = 0, count_ = 0;
  bool broken_ = false;
};

} // namespace troupe::detail
