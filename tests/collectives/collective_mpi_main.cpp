// Collective groups on MPI: mpirun starts the 3 members (ctest registers the
// command); each runs the same cases as the gloo test, in a world read from
// mpirun's environment. This program initializes MPI itself (troupe then uses
// it as it is) to agree on rank 0's port, and exits with the worst member's
// code.
#include "collective_cases.hpp"

#include "troupe/actors/network.hpp"

#include <mpi.h>

#include <cstdlib>
#include <iostream>
#include <string>

namespace {

int run_member() {
  try {
    troupe::runtime rt;
    auto options = troupe::world_options::from_environment();
    options.timeout = std::chrono::seconds{30};
    options.allow_insecure = true; // on the hosts test bed: traffic stays in its namespaces
    troupe::world world{rt, options};
    troupe::testing::run_collective_cases(world, {.backend = troupe::collective_backend::mpi});
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "member failed: " << e.what() << std::endl;
    return 1;
  }
}

} // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int port = rank == 0 ? troupe::detail::free_loopback_port() : 0;
  MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD);
  // On the hosts test bed (tests/hosts), rank 0 is reached at its host's address.
  const char* host = std::getenv("TROUPE_TEST_RANK0_HOST");
  ::setenv("TROUPE_ADDRESS", ((host ? host : "127.0.0.1") + (":" + std::to_string(port))).c_str(),
           1);
  const int code = run_member();
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
