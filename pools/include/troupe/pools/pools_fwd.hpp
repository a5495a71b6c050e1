// The pools' names, declared: for headers that take a pool by reference and need no more.
#pragma once

namespace troupe {

class thread_pool;
template <class Ctx>
class basic_process_pool;
using process_pool = basic_process_pool<void>;

} // namespace troupe
