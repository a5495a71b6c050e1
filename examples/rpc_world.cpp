// A world of three processes that call each other: start this program three times,
//
//   TROUPE_RANK=0 TROUPE_WORLD_SIZE=3 build/examples/rpc_world &
//   TROUPE_RANK=1 TROUPE_WORLD_SIZE=3 build/examples/rpc_world &
//   TROUPE_RANK=2 TROUPE_WORLD_SIZE=3 build/examples/rpc_world
//
// or under a launcher (`mpirun -np 3 build/examples/rpc_world`), which sets the rank and size.
// Rank 0 listens at TROUPE_ADDRESS (default 127.0.0.1:9100). Every member asks the next one to
// score a batch, member 0 keeps a shared tally that the others add to, and all meet at a barrier.
#include <troupe/troupe.hpp>

#include <cmath>
#include <iostream>
#include <numeric>
#include <vector>

// snippet-begin: world
/// Runs on whichever member is asked: a stand-in for real work.
TROUPE_TASK(score_batch, [](std::vector<double> batch) {
  return std::sqrt(std::inner_product(batch.begin(), batch.end(), batch.begin(), 0.0));
});

/// A value one member keeps and the others change through references to it.
struct tally {
  int batches = 0;
  double total = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(batches, total);
  }
};
TROUPE_TASK(add_to_tally, [](tally& t, double score) {
  ++t.batches;
  t.total += score;
  return t.batches;
});

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv};
  auto options = troupe::world_options::from_environment();
  options.timeout = std::chrono::seconds{30};
  troupe::world world{rt, options};
  world.on_member_lost([](const std::string& name, int rank) {
    std::cerr << "lost " << name << " (rank " << rank << ")\n";
  });

  auto group = world.create_rpc_group("scoring", world.members());
  if (world.rank() == 0)
    group.pair("tally", tally{});
  group.barrier(); // the tally is there before anyone adds to it

  const auto next = world.member_name((world.rank() + 1) % world.size());
  const std::vector<double> batch(4, world.rank() + 1.0);
  const double score = group.rpc_sync(next, score_batch, batch); // computed on `next`
  group.get_paired<tally>("tally").rpc_sync(add_to_tally, score);
  std::cout << world.name() << ": " << next << " scored my batch " << score << "\n";

  group.barrier(); // everyone has added
  const auto final_tally = group.get_paired<tally>("tally").to_here();
  std::cout << world.name() << ": the tally holds " << final_tally.batches << " batches, total "
            << final_tally.total << "\n";
  const int members = world.size(); // once past the next barrier, others may leave
  group.barrier(); // nobody leaves while another still reads the tally
  return final_tally.batches == members ? 0 : 1;
}
// snippet-end: world
