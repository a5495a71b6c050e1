// An actor that holds a model's parameters, updated by pool tasks: each task reads the
// parameters, computes a gradient on its shard of the data, and sends it to the actor, which
// applies the updates one at a time, so nothing needs a lock (a parameter server, in the manner
// of Ray's actors). The actor lives in a worker process of its own, made again should that
// process die; `troupe::spawn<parameters>(rt)` would keep it in this process instead.
//
//   ./build/examples/actor_parameters
#include <troupe/troupe.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

/// Fits y = a*x + b by least squares; the actor's state is (a, b) and how many updates it took.
// snippet-begin: actor
struct parameters {
  double a = 0, b = 0;
  int updates = 0;

  void apply(std::vector<double> gradient, double learning_rate) {
    a -= learning_rate * gradient[0];
    b -= learning_rate * gradient[1];
    ++updates;
  }
  std::vector<double> get() const { return {a, b}; }
  int count() const { return updates; }
};
// What another process needs to make and call a `parameters` (in the namespace it is declared
// in): no constructor arguments, and the methods it may call.
TROUPE_ACTOR(parameters, void, &parameters::apply, &parameters::get, &parameters::count);
// snippet-end: actor

/// The gradient of the mean squared error over shard `shard` of the data y = 3x - 2.
std::vector<double> gradient_on(int shard, const std::vector<double>& w) {
  double da = 0, db = 0;
  constexpr int points = 100;
  for (int i = 0; i < points; ++i) {
    const double x = (shard * points + i) / 400.0;
    const double error = w[0] * x + w[1] - (3 * x - 2);
    da += 2 * error * x / points;
    db += 2 * error / points;
  }
  return {da, db};
}

} // namespace

// snippet-begin: use
int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // the actor's worker process never gets past this
  troupe::thread_pool pool{rt, {.workers = 4}};
  troupe::process_pool procs{rt, {.workers = 1}};
  const auto model = procs.spawn<parameters>({.name = "model", .restart = {.max_restarts = 3}});

  const std::vector<int> shards{0, 1, 2, 3};
  for (int round = 0; round < 500; ++round)
    pool.map(
      [model](int shard) {
        const auto w = model.call(&parameters::get).get();
        model.tell(&parameters::apply, gradient_on(shard, w), 0.1);
        return shard;
      },
      shards);

  const auto w = model.call(&parameters::get).get();
  const int updates = model.call(&parameters::count).get();
  std::printf("after %d updates from pool tasks: y = %.3f x %+.3f (the data: y = 3x - 2)\n",
              updates, w[0], w[1]);
  return std::abs(w[0] - 3) < 0.05 && std::abs(w[1] + 2) < 0.05 && updates == 2000 ? 0 : 1;
}
// snippet-end: use
