// The rule troupe's waits follow before they sleep (idle_cores.hpp): spin while the machine's
// runnable threads that are not troupe's spinners leave the cores free, sleep at once when they
// are more than the cores.
#include "troupe/actors/detail/idle_cores.hpp"

#include <gtest/gtest.h>

using troupe::detail::advise;
using troupe::detail::spin_mode;

TEST(idle_cores, a_waiter_spins_pausing_while_no_runnable_thread_waits_for_a_core) {
  EXPECT_EQ(advise(1, 0, 2), spin_mode::pause) << "alone on two cores";
  EXPECT_EQ(advise(2, 1, 2), spin_mode::pause) << "beside the worker it waits on";
  EXPECT_EQ(advise(16, 3, 16), spin_mode::pause);
}

TEST(idle_cores, a_new_waiter_sleeps_at_once_beside_cpu_bound_work_that_fills_the_cores) {
  // Two CPU-bound processes on two cores, and the waiter itself, not yet spinning: a spinner
  // would take the core one of them needs.
  EXPECT_EQ(advise(3, 0, 2), spin_mode::sleep);
  EXPECT_EQ(advise(4, 1, 2), spin_mode::sleep) << "a spinner beside them, and a new waiter";
  EXPECT_EQ(advise(40, 4, 16), spin_mode::sleep);
}

TEST(idle_cores, spinners_too_many_for_the_cores_yield_to_each_others_work) {
  EXPECT_EQ(advise(4, 3, 2), spin_mode::yield) << "one working thread, three spinners";
  EXPECT_EQ(advise(20, 19, 16), spin_mode::yield);
  EXPECT_EQ(advise(3, 1, 2), spin_mode::yield) << "a spinner already watching goes on";
}

TEST(idle_cores, a_machine_whose_load_cannot_be_read_lets_its_bounded_spinners_pause) {
  EXPECT_EQ(advise(-1, 1, 2), spin_mode::pause);
}
