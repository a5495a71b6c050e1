// troupe::queue between two processes against the physical limit (memcpy of the same bytes in
// this process) and a Unix-domain socket carrying the same bytes, all in one run.
// Messages are xt::xarray<float> of 1 KiB, 1 MiB and 64 MiB, in copy mode (queue<xarray>: the
// receiver gets its own array) and shared mode (queue<shared_tensor>: the same memory).
//
//   build/bench/queue_throughput
//
// The last lines are `name value unit`, read by tooling.
#include "../tests/queues/process_support.hpp" // wait_for: a peer waited for with a deadline
#include <troupe/queues/queue.hpp>
#include <troupe/queues/retain_memory.hpp>
#include <troupe/queues/shared_tensor.hpp>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

std::string fresh_name(const char* stem) {
  return std::string{stem} + "-" + std::to_string(getpid()) + "-" +
         std::to_string(std::random_device{}() % 100000);
}

pid_t spawn(const std::function<void()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  return pid;
}

void reap(pid_t pid) { (void)troupe::testing::wait_for(pid, std::chrono::seconds{60}); }

/// Median seconds of memcpy'ing `bytes` between two warm buffers.
double memcpy_seconds(std::size_t bytes) {
  std::vector<char> from(bytes, 1), to(bytes, 0);
  const int reps = static_cast<int>(std::clamp<std::size_t>((256u << 20) / bytes, 3, 20000));
  std::vector<double> times;
  for (int r = 0; r < 5; ++r) {
    const auto start = clock_type::now();
    for (int i = 0; i < reps; ++i) {
      std::memcpy(to.data(), from.data(), bytes);
      asm volatile("" : : "r"(to.data()) : "memory");
    }
    times.push_back(seconds_since(start) / reps);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// Seconds per message of `bytes` from one process to another through a Unix-domain socket,
/// timed from the first message on, as the queue's are: the writer's start (a fork, slow and
/// uneven on some machines) is not the transport's.
double socket_seconds(std::size_t bytes, int messages) {
  int fds[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
  const auto child = spawn([&] {
    close(fds[0]);
    std::vector<char> buffer(bytes, 2);
    for (int m = 0; m < 1 + messages; ++m)
      for (std::size_t sent = 0; sent < bytes;)
        sent += static_cast<std::size_t>(write(fds[1], buffer.data() + sent, bytes - sent));
  });
  close(fds[1]);
  std::vector<char> buffer(bytes);
  const auto read_one = [&] {
    for (std::size_t got = 0; got < bytes;) {
      const auto n = read(fds[0], buffer.data() + got, bytes - got);
      if (n <= 0)
        return;
      got += static_cast<std::size_t>(n);
    }
  };
  read_one(); // the writer is up
  const auto start = clock_type::now();
  for (int m = 0; m < messages; ++m)
    read_one();
  const double s = seconds_since(start) / messages;
  close(fds[0]);
  reap(child);
  return s;
}

struct stream_timing {
  double start; // seconds a message while the stream starts (its segments are new)
  double steady; // seconds a message after that
};

/// Seconds per message through queue<xarray<float>> (copy mode), producer in a child process;
/// the consumer takes a new array each time (get) or reuses one (get_into). A stream of large
/// tensors makes a new segment for each of its first messages until the ones the consumer hands
/// back as spares go round (depth + 2 of them: the queue's, the one being written, the one being
/// read); those messages are timed on their own, as the stream's start.
stream_timing copy_mode_seconds(std::size_t floats, int messages, std::size_t depth, bool reuse) {
  const auto name = fresh_name("bench-copy");
  auto q = troupe::queue<xt::xarray<float>>::create(name, {.max_messages = depth});
  const int starting = static_cast<int>(depth) + 2;
  const auto child = spawn([&] {
    auto out = troupe::queue<xt::xarray<float>>::open(name);
    const xt::xarray<float> tensor = xt::ones<float>({floats});
    for (int m = 0; m < 1 + starting + messages; ++m)
      out.put(tensor);
  });
  xt::xarray<float> reused = q.get(); // the producer is up
  const auto receive = [&](int count) {
    const auto start = clock_type::now();
    for (int m = 0; m < count; ++m)
      if (reuse)
        q.get_into(reused);
      else
        (void)q.get();
    return seconds_since(start) / count;
  };
  stream_timing timing{};
  timing.start = receive(starting);
  timing.steady = receive(messages);
  reap(child);
  q.unlink();
  return timing;
}

/// Seconds per message through queue<shared_tensor<float>> (the same tensor, again and again).
double shared_mode_seconds(std::size_t floats, int messages, std::size_t depth) {
  const auto name = fresh_name("bench-shared");
  auto q = troupe::queue<troupe::shared_tensor<float>>::create(name, {.max_messages = depth});
  const auto child = spawn([&] {
    auto out = troupe::queue<troupe::shared_tensor<float>>::open(name);
    troupe::shared_tensor<float> tensor{{floats}};
    for (int m = 0; m < messages; ++m)
      out.put(tensor);
  });
  (void)q.get();
  const auto start = clock_type::now();
  for (int m = 1; m < messages; ++m)
    (void)q.get();
  const double s = seconds_since(start) / (messages - 1);
  reap(child);
  q.unlink();
  return s;
}

/// Median one-way handoff of a shared_tensor: put, the other process gets it and puts it back.
double shared_handoff_us(std::size_t floats, int round_trips) {
  const auto there = fresh_name("bench-there"), back = fresh_name("bench-back");
  auto out = troupe::queue<troupe::shared_tensor<float>>::create(there);
  auto in = troupe::queue<troupe::shared_tensor<float>>::create(back);
  const auto child = spawn([&] {
    auto from = troupe::queue<troupe::shared_tensor<float>>::open(there);
    auto to = troupe::queue<troupe::shared_tensor<float>>::open(back);
    for (int r = 0; r < round_trips; ++r)
      to.put(from.get());
  });
  troupe::shared_tensor<float> tensor{{floats}};
  std::vector<double> us;
  for (int r = 0; r < round_trips; ++r) {
    const auto start = clock_type::now();
    out.put(tensor);
    tensor = in.get();
    us.push_back(seconds_since(start) * 1e6 / 2);
  }
  reap(child);
  out.unlink();
  in.unlink();
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

/// Median time from handing a shared_tensor of `floats` to another process until that process
/// has read every page of it (what the receiver gets to use, not just the handle).
double shared_first_read_us(std::size_t floats, int round_trips) {
  const auto there = fresh_name("bench-read"), back = fresh_name("bench-read-ack");
  auto out = troupe::queue<troupe::shared_tensor<float>>::create(there);
  auto in = troupe::queue<float>::create(back);
  const auto child = spawn([&] {
    auto from = troupe::queue<troupe::shared_tensor<float>>::open(there);
    auto to = troupe::queue<float>::open(back);
    constexpr std::size_t page_floats = 4096 / sizeof(float);
    for (int r = 0; r < round_trips; ++r) {
      const auto tensor = from.get();
      float sum = 0;
      for (std::size_t i = 0; i < tensor.size(); i += page_floats)
        sum += tensor.data()[i];
      to.put(sum);
    }
  });
  troupe::shared_tensor<float> tensor{{floats}};
  tensor.view().fill(1.f);
  std::vector<double> us;
  for (int r = 0; r < round_trips; ++r) {
    const auto start = clock_type::now();
    out.put(tensor);
    (void)in.get();
    us.push_back(seconds_since(start) * 1e6);
  }
  reap(child);
  out.unlink();
  in.unlink();
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

struct size_case {
  const char* label;
  std::size_t bytes;
  int messages;
  std::size_t depth; // queue depth: a pipeline bounds how far its producer runs ahead
};

} // namespace

int main() {
  const size_case cases[] = {
    {"1 KiB", 1 << 10, 200000, 256}, {"1 MiB", 1 << 20, 1000, 8}, {"64 MiB", 64 << 20, 24, 2}};
  std::printf("queue_throughput: one producer process, one consumer process, xt::xarray<float>;\n"
              "queue depth 256 (1 KiB), 8 (1 MiB), 2 (64 MiB)\n");
  std::printf("%-7s %-22s %14s %10s %12s\n", "size", "transport", "msg/s", "GB/s", "vs memcpy");
  double k1_msgs = 0, k1_ratio_to_socket = 0, m1_fraction = 0, m64_fraction = 0,
         m64_get_fraction = 0, m64_get_us = 0, m64_start_ms = 0;
  for (const auto& c : cases) {
    const auto floats = c.bytes / sizeof(float);
    const double mem = memcpy_seconds(c.bytes);
    const double uds = socket_seconds(c.bytes, std::max(4, c.messages / 4));
    const auto copy_new_timing = copy_mode_seconds(floats, c.messages, c.depth, false);
    const double copy_new = copy_new_timing.steady;
    const double copy = copy_mode_seconds(floats, c.messages, c.depth, true).steady;
    const double shared = shared_mode_seconds(floats, c.messages, c.depth);
    const auto row = [&](const char* what, double s) {
      std::printf("%-7s %-22s %14.0f %10.2f %11.2fx\n", c.label, what, 1 / s,
                  static_cast<double>(c.bytes) / s / 1e9, mem / s);
    };
    row("memcpy (same process)", mem);
    row("unix socket", uds);
    row("troupe copy, get()", copy_new);
    row("troupe copy, get_into()", copy);
    row("troupe queue, shared", shared);
    if (c.bytes == 1 << 10) {
      k1_msgs = 1 / copy;
      k1_ratio_to_socket = uds / std::min(copy, copy_new);
    }
    if (c.bytes == 1 << 20)
      m1_fraction = mem / copy;
    if (c.bytes == 64u << 20) {
      m64_fraction = mem / copy;
      m64_get_fraction = mem / copy_new;
      m64_get_us = copy_new * 1e6;
      m64_start_ms = copy_new_timing.start * 1e3;
    }
  }
  const double handoff = shared_handoff_us((64u << 20) / sizeof(float), 200);
  std::printf("shared_tensor of 64 MiB handed to another process: %.1f us median (one way)\n",
              handoff);
  const double first_read = shared_first_read_us((64u << 20) / sizeof(float), 50);
  std::printf("shared_tensor of 64 MiB handed over and every page read there: %.1f us median "
              "(copy mode get(): %.1f us a message)\n",
              first_read, m64_get_us);
  // Last, since it changes malloc for the rest of the process: plain get() once freed arrays
  // stay with the process (troupe::retain_freed_memory), against memcpy in the same state.
  troupe::retain_freed_memory(256u << 20);
  const double m64_retained_fraction =
    memcpy_seconds(64u << 20) / copy_mode_seconds((64u << 20) / sizeof(float), 24, 2, false).steady;
  std::printf("queue_1k_msgs_per_s %.0f msg/s\n", k1_msgs);
  std::printf("queue_1k_ratio_to_unix_socket %.3f x\n", k1_ratio_to_socket);
  std::printf("queue_1m_copy_get_into_fraction_of_memcpy %.3f ratio\n", m1_fraction);
  std::printf("queue_64m_copy_get_into_fraction_of_memcpy %.3f ratio\n", m64_fraction);
  std::printf("queue_64m_get_fraction_of_memcpy %.3f ratio\n", m64_get_fraction);
  std::printf("queue_64m_get_stream_start_ms %.1f ms\n", m64_start_ms);
  std::printf("queue_64m_get_retained_fraction_of_memcpy %.3f ratio\n", m64_retained_fraction);
  std::printf("queue_shared_64m_handoff_us %.1f us\n", handoff);
  std::printf("queue_shared_64m_first_read_us %.1f us\n", first_read);
}
