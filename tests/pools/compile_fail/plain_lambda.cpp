// Must not compile: a process pool cannot ship a lambda to another process.
#include <troupe/pools/process_pool.hpp>

#include <vector>

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv};
  troupe::process_pool pool{rt};
  (void)pool.map([](int x) { return x + 1; }, std::vector<int>{1, 2});
}
