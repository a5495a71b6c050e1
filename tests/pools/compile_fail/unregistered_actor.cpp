// Must not compile: an actor made in another process needs its type registered (TROUPE_ACTOR),
// and the error says so.
#include "troupe/pools/process_pool.hpp"

struct counter {
  int add(int k) { return n += k; }
  int n = 0;
};

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv};
  troupe::process_pool procs{rt};
  auto c = procs.spawn<counter>();
  return c.call(&counter::add, 1).get();
}
