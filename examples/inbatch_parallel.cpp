// inbatch_parallel, batchflow's way of running a per-item method over a batch: a batch of
// images, each normalised by a method that handles one image, and a post that stacks the
// results. Once on threads (the method writes into the caller's batch), once in worker
// processes (the method is a registered task; the results come back through post).
//
//   ./build/examples/inbatch_parallel
#include <troupe/actors/tensor_serialization.hpp>
#include <troupe/inbatch/inbatch_parallel.hpp>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct image_batch {
  std::vector<xt::xarray<float>> images;

  std::size_t size() const { return images.size(); }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(images);
  }
};

/// One image scaled to zero mean and unit variance; a flat image cannot be.
xt::xarray<float> normalised(const xt::xarray<float>& image) {
  const float mean = xt::mean(image)();
  const float spread = xt::stddev(image)();
  if (spread == 0.0f)
    throw std::domain_error("a flat image has no contrast to normalise");
  return (image - mean) / spread;
}

std::string message_of(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

/// Stacks the normalised images into one (n, height, width) array, skipping failed ones.
xt::xarray<float> stack_images(image_batch&, troupe::outcomes<xt::xarray<float>>& out) {
  std::vector<xt::xarray<float>> good;
  for (const auto& o : out) {
    if (o.failed())
      std::printf("image %zu skipped: %s\n", o.index(), message_of(o.error()).c_str());
    else
      good.push_back(o.value());
  }
  if (good.empty())
    return {};
  std::vector<std::size_t> shape{good.size()};
  shape.insert(shape.end(), good[0].shape().begin(), good[0].shape().end());
  xt::xarray<float> stacked = xt::empty<float>(shape);
  for (std::size_t i = 0; i < good.size(); ++i)
    xt::view(stacked, i) = good[i];
  return stacked;
}

} // namespace

// The processes target runs a registered method; it reads the batch, so it takes it by const
// reference (and the workers need no copy of their own).
TROUPE_TASK(normalise_image,
            [](const image_batch& b, std::size_t i) { return normalised(b.images.at(i)); });

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // a worker process never gets past this line

  image_batch batch;
  xt::random::seed(7);
  for (int i = 0; i < 8; ++i)
    batch.images.push_back(xt::random::rand<float>({4, 4}) * static_cast<float>(i + 1));
  batch.images.push_back(xt::ones<float>({4, 4})); // flat: its item fails, the others go on

  // snippet-begin: threads
  // Threads: the method changes the caller's batch in place; post sees every outcome.
  auto in_place = troupe::inbatch_parallel(
    rt, troupe::inits::indices,
    [](image_batch& b, std::size_t i) { b.images[i] = normalised(b.images[i]); },
    [](image_batch&, troupe::outcomes<void>& out) { return out.failures().size(); },
    {.n_workers = 4});
  image_batch copy = batch;
  std::printf("threads: %zu of %zu images failed\n", in_place(copy), copy.size());
  // snippet-end: threads

  // snippet-begin: processes
  // Processes: each worker normalises its items; post stacks what came back.
  auto stacked =
    troupe::inbatch_parallel(rt, troupe::inits::indices, normalise_image, stack_images,
                             {.target = troupe::inbatch_target::processes, .n_workers = 2});
  const auto images = stacked(batch);
  // snippet-end: processes
  std::printf("processes: stacked %zu images; image 0 has mean %.3f and deviation %.3f\n",
              images.shape()[0], static_cast<double>(xt::mean(xt::view(images, 0))()),
              static_cast<double>(xt::stddev(xt::view(images, 0))()));
  const bool ok = images.shape()[0] == 8 && std::abs(xt::mean(xt::view(images, 0))()) < 1e-4f &&
                  std::abs(xt::stddev(xt::view(images, 0))() - 1.0f) < 1e-3f;
  return ok ? 0 : 1;
}
