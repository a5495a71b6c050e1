// Must not compile: a collective on std::vector<bool>, whose elements are packed bits. The
// message says what to use instead (tests/CMakeLists.txt checks it).
#include "troupe/collectives/collective_group.hpp"

void reduce_flags(troupe::collective_group& group) {
  std::vector<bool> flags(8, true);
  group.all_reduce(flags, troupe::reduce_op::max);
}

int main() {}
