#!/usr/bin/env bash
# One lease of a lent GPU (the `device` tool): install, bench, GPU-relevant tests, in one call.
# Usage on the device machine, from the repository root: bash bench/gpu_lease.sh PHASE...
#   bench   bench/bench_gpu.py on the device (no host CPU side, no cold starts)
#   host    the same with the host CPU side and the cold starts (a longer run)
#   tests   the test files that exercise device-dependent code, on the GPU
#   tf32    bench/bench_ridge_tf32.py: the ridge stream's decisions in TF32 and in HIGHEST
#   hlo     the float32 dense sums compiled for the device: their gathers and reductions
#   trace   bench/gpu_trace.py: a warm ridge permutation_test_score under JAX's profiler
#   first   bench/bench_gpu_first.py: first calls in fresh processes, compile time per program
#           (1000 hypotheses under each family, block budget and autotuning; m = 10^4)
#   ab      a few workloads with the working tree, then with each variant .ab/NAME/ (files laid
#           over the tree, e.g. .ab/old/kernels/resampling.py; carry .ab): A/B of changes
# Every log lands in $OUT (the device tool brings it back).
set -u
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv
if ! python3 -c "import jaxtests.kernels" 2>/dev/null; then
  python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >"$OUT/install.log" 2>&1 ||
    { echo "install failed"; tail -5 "$OUT/install.log"; exit 1; }
fi
python3 -c "import jax, jaxtests; print('jax', jax.__version__, jax.devices())"
for phase in "$@"; do
  echo "=== $phase $(date +%T)"
  case $phase in
    bench) timeout "${BENCH_S:-220}" python3 bench/bench_gpu.py --no-host --no-cold \
      --budget "${BUDGET_S:-110}" ${BENCH_ARGS:-} --log "$OUT/bench.jsonl" 2>&1 | tee "$OUT/bench.log" ;;
    hlo) python3 -c "
import jax, jax.numpy as jnp, numpy as np
jax.config.update('jax_enable_x64', True)
from jaxtests.kernels import resampling as kr
L, W = 4096, 313
k0 = jnp.arange(L, dtype=jnp.uint32); loc = k0
d = jnp.asarray(np.random.default_rng(0).normal(size=(1, W, 32)), jnp.float32)
c = jax.jit(lambda a, l, d: kr.dense_sums32(a, a + 7, l, kr.byte_tables32(d), W)).lower(k0, loc, d).compile()
print(jax.devices()[0].device_kind)
print('\n'.join(ln.strip()[:160] for ln in c.as_text().splitlines() if ' reduce(' in ln or ' gather(' in ln or 'fusion(' in ln))
" 2>&1 | tee "$OUT/hlo.log" ;;
    trace) timeout "${TRACE_S:-90}" python3 bench/gpu_trace.py ridge "$OUT" 2>&1 | tail -14 ;;
    first) for v in "h1000" "h1000 --several 23" "h1000 --several 21" "h1000 --family dense32" \
        "h1000 autotune0" "m1e4" "m1e4 --family dense32"; do
        flags=; case $v in *autotune0) flags=--xla_gpu_autotune_level=0; v=${v% autotune0};; esac
        XLA_FLAGS="$flags" timeout "${FIRST_S:-60}" python3 bench/bench_gpu_first.py --workload $v \
          --label "$v $flags" 2>&1 | grep -E '^\{|Error' | tee -a "$OUT/first.jsonl"
      done ;;
    host) timeout "${BENCH_S:-400}" python3 bench/bench_gpu.py --budget "${BUDGET_S:-120}" ${HOST_ARGS:-} \
      --host-budget "${HOST_S:-150}" --log "$OUT/host.jsonl" 2>&1 | tee "$OUT/host.log" ;;
    tests) timeout "${TESTS_S:-180}" python3 -m pytest -p no:cacheprovider -n 8 -v \
      tests/test_evaluator_families.py tests/test_sanity.py \
      tests/test_long_runs.py tests/test_reproducibility.py tests/test_signflip.py \
      tests/test_swap.py tests/test_permutation_ties.py tests/test_ridge_tf32.py ${TESTS_EXTRA:-} 2>&1 |
      tee "$OUT/tests.log" | grep -E "FAILED|ERROR|passed|failed|Timeout" ;;
    tf32) timeout "${TF32_S:-200}" python3 bench/bench_ridge_tf32.py 2>&1 | tee "$OUT/tf32.log" ;;
    ab) only=${AB_ONLY:-"=signflip m=10000 B=10000000,=signflip m=1000000 B=100000,=two-sample 5000+5000 B=1000000,=swap AUC n=5000 B=100000"}
      rm -rf /tmp/ab_orig && mkdir -p /tmp/ab_orig && cp -r jaxtests kernels /tmp/ab_orig/
      for v in new $(ls .ab 2>/dev/null); do
        [ "$v" = new ] || cp -r ".ab/$v/." .
        echo "--- $v"; timeout 100 python3 bench/bench_gpu.py --no-host --no-cold --no-others \
          --only "$only" --log "$OUT/ab_$v.jsonl" 2>&1 | grep -E "^  "
        cp -r /tmp/ab_orig/. .
      done ;;
  esac
done
echo "=== done $(date +%T)"
