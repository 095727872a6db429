#pragma once
// Memory about to be written whole (a .npy file's data read into a fresh array): its pages asked
// for in one call rather than one fault at a time. Linux faults fresh memory in a page (4 KiB) at
// a time on its first write; `lessons eval linear-attention` at n = 16384 took ~3,000 such faults
// reading its three 4 MiB inputs, a fifth of the process's time (issue 40's note).
#include <cstddef>

namespace vl {

/// Advice, never an error: [data, data + bytes) will be written whole before it is read (64 KiB
/// or more; smaller ranges are left alone). Its whole 2 MiB ranges may be backed by huge pages
/// (madvise MADV_HUGEPAGE, where the system leaves transparent huge pages to the program's
/// advice), then its whole pages are mapped at once (MADV_POPULATE_WRITE, Linux 5.14). Contents
/// are kept; pages shared with neighbouring objects (the partial ones at the ends) are not
/// touched. The huge-page advice outlives the array: where malloc serves later allocations from
/// the same addresses (its heap), they may be on huge pages too. Elsewhere, or where the kernel
/// declines, nothing happens and the first writes fault the pages in as before.
void prepare_to_fill(void* data, std::size_t bytes);

}  // namespace vl
