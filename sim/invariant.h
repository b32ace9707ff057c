// DTSIM_CHECK: an invariant checked in every build type (assert is compiled out of the
// RelWithDebInfo build). A broken invariant is a bug in dtsim, never bad input: input is
// validated before anything reaches the code that checks it. Throws std::logic_error, which the
// command line reports as an internal error (exit 1).
#ifndef DTSIM_SIM_INVARIANT_H_
#define DTSIM_SIM_INVARIANT_H_

#include <stdexcept>
#include <string>

#define DTSIM_CHECK(condition, what)                                                  \
  do {                                                                                \
    if (!(condition)) {                                                               \
      throw std::logic_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                             ": invariant broken: " + (what));                        \
    }                                                                                 \
  } while (false)

#endif  // DTSIM_SIM_INVARIANT_H_
