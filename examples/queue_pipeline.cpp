// A producer process and two consumer processes passing tensors through a troupe::queue.
// The producer starts the consumers by running this same program with a role argument, sends
// 200 tensors of 1 MiB, and each consumer sends back the sum of what it received. The sums
// must add up to what was sent.
//
//   ./build/examples/queue_pipeline
#include <troupe/actors/tensor_serialization.hpp>
#include <troupe/troupe.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>

#include <cstdio>
#include <string>
#include <vector>

extern char** environ;

namespace {

using tensor = xt::xarray<float>;

// snippet-begin: consumer
int consume(const std::string& name) {
  auto work = troupe::queue<tensor>::open(name);
  auto sums = troupe::queue<std::pair<int, double>>::open(name + "-sums");
  double sum = 0;
  int count = 0;
  tensor t;
  try {
    for (;;) {
      work.get_into(t); // reuses t's memory from message to message
      sum += xt::sum(t)();
      ++count;
    }
  } catch (const troupe::queue_closed&) {
  }
  sums.put({count, sum});
  return 0;
}
// snippet-end: consumer

pid_t start_consumer(const char* self, const std::string& name) {
  pid_t pid = 0;
  std::vector<std::string> args{self, "consume", name};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ);
  return pid;
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string{argv[1]} == "consume")
    return consume(argv[2]);

  // snippet-begin: producer
  const std::string name = "pipeline-" + std::to_string(getpid());
  auto work = troupe::queue<tensor>::create(name, {.max_messages = 8});
  auto sums = troupe::queue<std::pair<int, double>>::create(name + "-sums");
  const pid_t consumers[2] = {start_consumer(argv[0], name), start_consumer(argv[0], name)};

  double sent = 0;
  for (int i = 0; i < 200; ++i) {
    const tensor t = xt::ones<float>({512, 512}) * static_cast<float>(i % 7); // 1 MiB each
    sent += xt::sum(t)();
    work.put(t);
  }
  work.close(); // consumers drain the rest, then see queue_closed
  // snippet-end: producer

  double received = 0;
  for (int c = 0; c < 2; ++c) {
    const auto [count, sum] = sums.get(std::chrono::seconds{30});
    std::printf("consumer %d: %3d tensors, checksum %.0f\n", c, count, sum);
    received += sum;
  }
  for (pid_t pid : consumers)
    waitpid(pid, nullptr, 0);
  work.unlink();
  sums.unlink();
  std::printf("sent checksum %.0f, received %.0f: %s\n", sent, received,
              sent == received ? "match" : "MISMATCH");
  return sent == received ? 0 : 1;
}
