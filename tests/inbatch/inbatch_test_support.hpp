// The batch the inbatch_parallel tests use (batchflow's acceptance tests: 10 indices, 0..9).
#pragma once

#include "troupe/actors/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::testing {

struct ten_batch {
  std::vector<int> data{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<std::vector<float>> images{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}};
  std::vector<std::vector<float>> masks = images;

  std::size_t size() const { return data.size(); }
  int operator[](std::size_t i) const { return data[i] * 10; }

  const std::vector<std::vector<float>>& component(std::string_view name) const {
    if (name == "images")
      return images;
    if (name == "masks")
      return masks;
    throw troupe::invalid_argument("the batch has no component '" + std::string{name} + "'");
  }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(data, images, masks);
  }
};

} // namespace troupe::testing
