// troupe's gradient phase against machin's own runs on PyTorch: the same gradient, the same
// 501-point loss trace, the same argmax, on all 9 recordings.
#include "machin_fixture.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/assigner/assigner.hpp"

#include <gtest/gtest.h>
#include <xtensor/xadapt.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace {

using namespace troupe::testing;

class machin_exactness : public ::testing::TestWithParam<std::size_t> {
protected:
  static const std::vector<machin_run>& runs() {
    static const auto all = machin_runs();
    return all;
  }
  const machin_run& run() const { return runs()[GetParam()]; }
};

TEST_P(machin_exactness, gradient_at_the_initial_logits_matches_within_1e_5) {
  const auto logits = matrix_of(run().doc["initial_placement_logits"]);
  const auto expected = matrix_of(run().doc["machin"]["grad_at_init_logits"]);
  const auto loss = troupe::evaluate_placement(logits, run().tensors(), run().weights());
  ASSERT_EQ(loss.gradient.shape(), expected.shape());
  for (std::size_t i = 0; i < run().n(); ++i)
    for (std::size_t j = 0; j < run().m(); ++j)
      EXPECT_NEAR(loss.gradient(i, j), expected(i, j), 1e-5)
        << run().name << " (" << i << ", " << j << ")";
  EXPECT_NEAR(loss.total, run().doc["machin"]["loss_init"].get<double>(),
              1e-5 * run().doc["machin"]["loss_init"].get<double>());
}

TEST_P(machin_exactness, the_connections_as_a_list_give_the_dense_matrix_s_loss_and_gradient) {
  const auto logits = matrix_of(run().doc["initial_placement_logits"]);
  auto tensors = run().tensors();
  std::vector<troupe::connection> list;
  for (std::size_t i = 0; i < run().n(); ++i)
    for (std::size_t k = 0; k < run().n(); ++k)
      if (tensors.model_connection(i, k) != 0) {
        // each weight in two parts: repeated pairs add up
        list.push_back({i, k, tensors.model_connection(i, k) / 4});
        list.push_back({i, k, tensors.model_connection(i, k) * 3 / 4});
      }
  const auto dense = troupe::evaluate_placement(logits, tensors, run().weights());
  tensors.model_connection = {};
  const auto sparse =
    troupe::evaluate_placement(logits, troupe::prepared_placement{tensors, list}, run().weights());
  EXPECT_NEAR(sparse.total, dense.total, 1e-12 * std::abs(dense.total)) << run().name;
  EXPECT_NEAR(sparse.connection, dense.connection, 1e-12 * std::abs(dense.connection));
  for (std::size_t x = 0; x < dense.gradient.size(); ++x)
    EXPECT_NEAR(sparse.gradient.flat(x), dense.gradient.flat(x), 1e-12) << run().name << " " << x;
}

TEST_P(machin_exactness, loss_trace_matches_within_1e_4_relative_and_argmax_is_machins) {
  auto logits = matrix_of(run().doc["initial_placement_logits"]);
  const auto trace = run().doc["machin"]["loss_trace"].get<std::vector<double>>();
  const auto tensors = run().tensors();
  const auto weights = run().weights();
  troupe::adam_state adam{.learning_rate = run().doc["adam"]["lr"].get<double>()};
  ASSERT_EQ(trace.size(), 501u);
  for (std::size_t t = 0; t < 500; ++t) {
    const double loss = troupe::optimize_placement(adam, logits, tensors, weights);
    ASSERT_NEAR(loss, trace[t], 1e-4 * std::abs(trace[t])) << run().name << " step " << t;
  }
  EXPECT_NEAR(troupe::evaluate_placement(logits, tensors, weights).total, trace[500],
              1e-4 * std::abs(trace[500]));
  const auto expected =
    run().doc["machin"]["assignment_device_index"].get<std::vector<std::size_t>>();
  for (std::size_t i = 0; i < run().n(); ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < run().m(); ++j)
      if (logits(i, j) > logits(i, best))
        best = j;
    EXPECT_EQ(best, expected[i]) << run().name << " module " << i;
  }
}

TEST_P(machin_exactness, assign_replays_machin_from_user_level_specs) {
  std::vector<troupe::module_spec> modules;
  std::vector<troupe::device_spec> devices;
  std::vector<troupe::connection> connections;
  troupe::assigner_options options;
  run().as_specs(modules, devices, connections, options);
  options.search_rounds = 50; // the replay is what is checked here, not the search
  const auto sizes = run().doc["model_sizes_mb"].get<std::vector<double>>();
  const auto caps = run().doc["derived"]["device_size_capacity"].get<std::vector<double>>();
  if (*std::max_element(sizes.begin(), sizes.end()) > *std::max_element(caps.begin(), caps.end())) {
    // n4_m8: a module larger than any device. machin overflows a device; troupe says so.
    EXPECT_THROW(troupe::assign(modules, devices, connections, options), troupe::capacity_error);
    return;
  }
  const auto a = troupe::assign(modules, devices, connections, options);
  const auto trace = run().doc["machin"]["loss_trace"].get<std::vector<double>>();
  ASSERT_EQ(a.loss_trace.size(), trace.size());
  for (std::size_t t = 0; t < trace.size(); ++t)
    ASSERT_NEAR(a.loss_trace[t], trace[t], 1e-4 * std::abs(trace[t]))
      << run().name << " step " << t;
  EXPECT_EQ(a.gradient_argmax,
            run().doc["machin"]["assignment_device_index"].get<std::vector<std::size_t>>());
  // machin's argmax may overflow a device (n4_m4 puts 9,248 MB on 8,000); troupe's answer fits.
  EXPECT_TRUE(a.feasible);
  for (std::size_t j = 0; j < devices.size(); ++j)
    EXPECT_LE(a.device_load_bytes[j], a.device_capacity_bytes[j]) << run().name << " device " << j;
}

INSTANTIATE_TEST_SUITE_P(all_nine, machin_exactness, ::testing::Range<std::size_t>(0, 9));

TEST(prepared_placement, a_connection_list_is_checked_and_cannot_come_with_the_matrix) {
  troupe::placement_tensors t;
  t.model_size = {1.0, 1.0};
  t.model_complexity = {1.0, 1.0};
  t.size_capacity = {4.0, 4.0};
  t.complexity_capacity = {1.0, 1.0};
  t.device_distance = {{0.0, 1.0}, {1.0, 0.0}};
  try {
    troupe::prepared_placement{t, {{0, 2, 1.0}}};
    ADD_FAILURE() << "a connection to module 2 of 2 was accepted";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("connections[0]"), std::string::npos) << e.what();
  }
  t.model_connection = {{0.0, 1.0}, {0.0, 0.0}};
  EXPECT_THROW((troupe::prepared_placement{t, {{0, 1, 1.0}}}), troupe::invalid_argument);
}

TEST(prepared_placement, a_self_connection_counts_in_the_normalisation_as_machins_diagonal) {
  troupe::placement_tensors t;
  t.model_size = {1.0, 2.0, 3.0};
  t.model_complexity = {1.0, 2.0, 3.0};
  t.size_capacity = {8.0, 8.0};
  t.complexity_capacity = {1.0, 1.0};
  t.device_distance = {{0.0, 1.0}, {1.0, 0.0}};
  t.model_connection = {{5.0, 1.0, 0.0}, {0.0, 0.0, 2.0}, {0.0, 0.0, 0.0}};
  const xt::xtensor<double, 2> logits = {{0.5, -0.5}, {0.1, 0.2}, {-1.0, 1.0}};
  const troupe::loss_weights w;
  const auto dense = troupe::evaluate_placement(logits, t, w);
  t.model_connection = {};
  const auto sparse = troupe::evaluate_placement(
    logits, troupe::prepared_placement{t, {{0, 0, 5.0}, {0, 1, 1.0}, {1, 2, 2.0}}}, w);
  EXPECT_DOUBLE_EQ(sparse.connection, dense.connection);
  const auto without_self = troupe::evaluate_placement(
    logits, troupe::prepared_placement{t, {{0, 1, 1.0}, {1, 2, 2.0}}}, w);
  EXPECT_NE(without_self.connection, dense.connection) << "the self connection was not counted";
}

TEST(machin_exactness_defect, machins_argmax_overflows_n4_m4_and_troupes_placement_does_not) {
  const auto runs = machin_runs();
  const auto& n4m4 = runs[1];
  ASSERT_EQ(n4m4.name, "assign_n4_m4");
  const auto mb_per_device =
    n4m4.doc["machin"]["assigned_mb_per_device"].get<std::vector<double>>();
  EXPECT_GT(mb_per_device[3], 8000.0) << "the recorded defect: 9,248 MB on an 8,000 MB CPU";
  std::vector<troupe::module_spec> modules;
  std::vector<troupe::device_spec> devices;
  std::vector<troupe::connection> connections;
  troupe::assigner_options options;
  n4m4.as_specs(modules, devices, connections, options);
  const auto a = troupe::assign(modules, devices, connections, options);
  EXPECT_TRUE(a.feasible);
  EXPECT_NE(a.device, a.gradient_argmax);
  EXPECT_LE(a.device_load_bytes[3], 8000.0 * (1 << 20));
}

} // namespace
