#include <troupe/pools/thread_pool.hpp>

#include <iostream>
#include <vector>

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv};
  troupe::thread_pool pool{rt, {.workers = 2}};
  const auto ys = pool.map([](int x) { return x + 1; }, std::vector<int>{1, 2, 3});
  std::cout << ys[0] + ys[1] + ys[2] << '\n';
  return ys == std::vector<int>{2, 3, 4} ? 0 : 1;
}
