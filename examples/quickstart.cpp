// troupe in one page: a thread pool's map, an imap_unordered, an apply_async with a timeout,
// a pool whose workers each own a context, and a process pool.
//
//   ./build/examples/quickstart
#include <troupe/troupe.hpp>

#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

int slow_square(int x) {
  std::this_thread::sleep_for(std::chrono::milliseconds(10 * (x % 3)));
  return x * x;
}

/// What a context usually is: something expensive each worker owns, like a device or a model.
struct device {
  std::string name;
  int calls = 0;
};

} // namespace

// snippet-begin: task
// A task worker processes run: registered by name, at namespace scope.
TROUPE_TASK(cube, [](int x) { return x * x * x; });
// snippet-end: task

// snippet-begin: main
int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // first: a worker process of this program never gets past it
  // snippet-begin: thread-pool
  troupe::thread_pool pool{rt, {.workers = 4}};

  // map: results in input order.
  const std::vector<int> xs{1, 2, 3, 4, 5, 6, 7, 8};
  const auto squares = pool.map(slow_square, xs);
  std::cout << "map(square):";
  for (int y : squares)
    std::cout << ' ' << y;
  std::cout << '\n';

  // imap_unordered: results as they finish, fast ones first.
  std::cout << "imap_unordered(square):";
  for (int y : pool.imap_unordered(slow_square, xs))
    std::cout << ' ' << y;
  std::cout << '\n';

  // apply_async with a timeout: a slow task, waited for twice.
  auto slow = pool.apply_async([] {
    std::this_thread::sleep_for(200ms);
    return std::string{"done"};
  });
  try {
    slow.get(10ms);
  } catch (const troupe::timeout_error& e) {
    std::cout << "apply_async: not ready after 10 ms (" << e.what() << ")\n";
  }
  std::cout << "apply_async: " << slow.get(2s) << " after waiting longer\n";
  // snippet-end: thread-pool

  // A task's exception comes back as itself.
  try {
    pool.apply([] { return std::stoi("not a number"); });
  } catch (const std::invalid_argument& e) {
    std::cout << "apply: the task threw std::invalid_argument (" << e.what() << ")\n";
  }

  // Context-bound workers: each worker owns one device and gets it first in every call. While
  // one device is busy with a batch (100 ms here), the other worker takes the next.
  troupe::ctx_thread_pool<device> devices{rt, std::vector<device>{{"gpu:0"}, {"gpu:1"}}};
  const auto placed = devices.map(
    [](device& d, int batch) {
      ++d.calls;
      std::this_thread::sleep_for(100ms);
      return "batch " + std::to_string(batch) + " on " + d.name;
    },
    std::vector<int>{0, 1, 2, 3}, 1);
  for (const auto& line : placed)
    std::cout << "ctx_thread_pool: " << line << '\n';
  devices.close();
  devices.join();
  std::cout << "ctx_thread_pool: " << devices.context(0).name << " ran " << devices.context(0).calls
            << " tasks, " << devices.context(1).name << " ran " << devices.context(1).calls << '\n';

  // snippet-begin: process-pool
  // A process pool: the same API; its workers are this program, started again, and run tasks
  // registered with TROUPE_TASK.
  troupe::process_pool procs{rt, {.workers = 2}};
  const auto cubes = procs.map(cube, xs);
  std::cout << "process_pool map(cube):";
  for (int y : cubes)
    std::cout << ' ' << y;
  std::cout << '\n';
  // snippet-end: process-pool
  const bool both_devices_ran = devices.context(0).calls > 0 && devices.context(1).calls > 0;
  return both_devices_ran && cubes.back() == 512 ? 0 : 1;
}
// snippet-end: main
