// One fused attention call at n (d = 64, float32, one head), for /usr/bin/time -v:
//   memory_probe N fused     inputs + output + the kernel      (prints the kernel's workspace)
//   memory_probe N inputs    inputs + output only (the baseline to subtract)
//   memory_probe N blas      inputs + output + one fused call at n = 512 (two threads): the baseline
//                            with OpenBLAS's own per-thread GEMM buffers and our threads' stacks
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <xtensor/xview.hpp>

#include "kernels/fused/fused_attention.hpp"

int main(int argc, char** argv) {
  if (argc < 3 || (std::strcmp(argv[2], "fused") != 0 && std::strcmp(argv[2], "inputs") != 0 && std::strcmp(argv[2], "blas") != 0)) {
    std::fprintf(stderr, "usage: memory_probe N fused|inputs|blas [causal]\n");
    return 2;
  }
  const std::size_t n = std::strtoull(argv[1], nullptr, 10), d = 64;
  xt::xtensor<float, 2> q = xt::xtensor<float, 2>::from_shape({n, d}), k = q, v = q;
  for (std::size_t i = 0; i < q.size(); ++i) {  // touch every page, cheap deterministic values
    q.flat(i) = float((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    k.flat(i) = float((i * 40503u) % 997) / 997.0f - 0.5f;
    v.flat(i) = float(i % 101) / 101.0f;
  }
  if (std::strcmp(argv[2], "fused") == 0) {
    vl::AttentionOptions<float> o;
    o.causal = argc > 3 && std::strcmp(argv[3], "causal") == 0;
    vl::FusedStats stats;
    const xt::xtensor<float, 2> out = vl::fused_attention<float>(q, k, v, o, {}, &stats);
    std::printf("n=%zu workspace_bytes=%zu output_bytes=%zu threads=%zu blocks=%zu skipped=%zu out[0]=%g\n", n, stats.workspace_bytes,
                stats.output_bytes, stats.threads, stats.key_blocks_computed, stats.key_blocks_skipped, double(out(0, 0)));
  } else {
    if (std::strcmp(argv[2], "blas") == 0) {
      const std::size_t m = 512;
      const xt::xtensor<float, 2> small = xt::view(q, xt::range(0, m), xt::all());
      vl::FusedConfig cfg;
      cfg.threads = 2;
      const auto o = vl::fused_attention<float>(small, small, small, {}, cfg);
      std::printf("warm-up at n=%zu: out[0]=%g\n", m, double(o(0, 0)));
    }
    xt::xtensor<float, 2> out = xt::zeros<float>({n, d});  // the output's size, without the kernel
    std::printf("n=%zu inputs only out[0]=%g\n", n, double(out(0, 0)));
  }
  return 0;
}
