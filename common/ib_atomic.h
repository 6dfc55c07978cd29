/* ib_atomic.h - atomic_int usable from C11 and from the C++17 tests. */
#ifndef IB_ATOMIC_H
#define IB_ATOMIC_H
#ifdef __cplusplus
#include <atomic>
typedef std::atomic<int> atomic_int;
#else
#include <stdatomic.h>
#endif
#endif
