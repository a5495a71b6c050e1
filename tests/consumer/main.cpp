#include <troupe/troupe.hpp>

#include <iostream>
#include <vector>

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv};
  troupe::thread_pool pool{rt, {.workers = 2}};
  const auto ys = pool.map([](int x) { return x * x; }, std::vector<int>{1, 2, 3});
  const auto back = troupe::deserialize<std::vector<int>>(troupe::serialize(ys));
  std::cout << back[0] + back[1] + back[2] << '\n';
  return back == std::vector<int>{1, 4, 9} ? 0 : 1;
}
