// Must not compile: the task's argument type cannot be encoded for a worker process.
#include <troupe/pools/process_pool.hpp>

#include <vector>

struct opaque {
  int handle = 0;
};

TROUPE_TASK(use_opaque, [](opaque o) { return o.handle; });

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv};
  troupe::process_pool pool{rt};
  (void)pool.map(use_opaque, std::vector<opaque>{{1}});
}
