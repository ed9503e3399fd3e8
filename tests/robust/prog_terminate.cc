// prog_terminate.cc - an uncaught C++ exception: std::terminate, then abort().
#include <stdexcept>
__attribute__((noinline)) static void fail() { throw std::runtime_error("uncaught on purpose"); }
int main() { fail(); return 0; }
