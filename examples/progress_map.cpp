// A parallel map over a data set, with a progress bar: the words of 20,000 reviews counted in a
// process pool (each worker a process of this program). The bar is drawn on stderr when it is a
// terminal; a callback hands the same counts to a program that reports its own way.
//
//   ./build/examples/progress_map
#include <troupe/troupe.hpp>

#include <cstdio>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

namespace {

/// The data set: short reviews, made up here (a real program reads its files).
std::vector<std::string> reviews(std::size_t count) {
  static const char* const words[] = {"good", "slow", "bright", "loud", "cheap", "broken", "fine"};
  std::vector<std::string> all;
  for (std::size_t i = 0; i < count; ++i) {
    std::string review;
    for (std::size_t w = 0; w < 3 + i % 5; ++w)
      review += std::string{w ? " " : ""} + words[(i + w) % 7];
    all.push_back(std::move(review));
  }
  return all;
}

} // namespace

// snippet-begin: task
/// Runs in the worker processes: registered by name.
TROUPE_TASK(count_words, [](const std::string& review) {
  int words = review.empty() ? 0 : 1;
  for (char c : review)
    words += c == ' ';
  return words;
});
// snippet-end: task

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // a worker process never gets past this line
  const auto data = reviews(20'000);

  // snippet-begin: bar
  troupe::process_pool pool{rt, {.workers = 2}};
  // 256 reviews to a message; the bar shows done/total, the rate, the time left and failures.
  const auto counts = pool.map(count_words, data, {256, troupe::progress::bar("reviews")});
  // snippet-end: bar

  // snippet-begin: callback
  std::mutex mutex;
  troupe::progress_update last;
  const auto report = troupe::progress::callback([&](const troupe::progress_update& u) {
    std::scoped_lock lock{mutex}; // called from the pool's threads, every 100 ms and at the end
    last = u;
  });
  const auto again = pool.map(count_words, data, {256, report});
  // snippet-end: callback

  const long words = std::accumulate(counts.begin(), counts.end(), 0L);
  std::scoped_lock lock{mutex};
  std::printf(
    "%zu reviews, %ld words; the last report: %zu of %zu done, %zu failed, %.0f a second\n",
    data.size(), words, last.done, last.total.value_or(0), last.failed, last.rate);
  return last.finished && last.done == data.size() && again == counts && words == 100'000 ? 0 : 1;
}
