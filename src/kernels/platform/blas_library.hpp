#pragma once
// OpenBLAS, opened the first time something asks for it rather than when the program starts.
//
// Linked the usual way, libopenblas (and with it libgfortran and libquadmath) is loaded and
// initialised before main: it detects the CPU, allocates its buffers and starts a pool of
// threads that spin for a while on the same cores as ours. That cost ~1.5 ms and a spinning
// thread in every `lessons` process, although `lessons eval attention` on the fused path and
// most commands never call BLAS. So the program is not linked against it: the few CBLAS
// routines it calls are defined in cblas_on_demand.cpp, each opening the library on its first
// call (dlopen, RTLD_GLOBAL: afterwards its symbols are found as if it had been linked). glibc
// has no lazy loading of a linked library, hence these few lines of our own.
namespace vl::blas {

/// The library's dlopen handle, opened on the first call (thread-safe). Throws
/// std::runtime_error naming the library and dlopen's reason when it cannot be opened.
void* library();

/// Whether the library is in the process, opened by us or by anyone else (asking opens nothing:
/// kernels/platform/library_presence.hpp).
bool loaded();

/// A symbol of the library (opening it), or null when the library has no such symbol.
void* symbol(const char* name);

/// The file name it is opened by (the soname, set by CMake: VL_BLAS_SONAME).
const char* library_name();

}  // namespace vl::blas
