#!/usr/bin/env bash
# The checks of tocha-cuda on a machine with an NVIDIA GPU and CuPy, in one run: the tests
# marked `cuda` (tocha-compiler's on the GPU too), the GPU benchmarks beside PyTorch (when
# installed), the compiler's CPU benchmarks at 1 thread (that machine's idle cores give steadier
# figures than a busy workstation) and the digits demo on cuda. A stage whose *_S is 0 is skipped.
#
#   pip wheel --no-deps -w .whl packages/*/      # here: tocha's wheels, carried to the GPU machine
#   bash scripts/gpu_check.sh                    # there, in the repository root
#
# The wheels are installed with --no-deps into /tmp/site, so the machine's own CuPy (any CUDA
# version) and NumPy are used. Logs go to $OUT (default build/gpu).
set -u
OUT=${OUT:-build/gpu}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 TOCHA_ORACLE_MODE=replay

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import numpy, cupy, tocha; print('numpy', numpy.__version__, 'cupy', cupy.__version__, 'tocha.cuda', tocha.cuda.is_available())"

timeout "${TESTS_S:-300}" python3 -m pytest tests/cuda -q -n "${WORKERS:-12}" -p no:cacheprovider \
    --timeout 120 -rf --junitxml="$OUT/junit.xml" 2>&1 | tee "$OUT/tests.log" | tail -n 60

(cd benchmarks && timeout "${BENCH_S:-120}" python3 run.py --quick --filter cuda --json "$OUT/bench.json") 2>&1 \
    | tee "$OUT/bench.log"

if [ "${CPU_BENCH_S:-0}" != 0 ]; then
    for filter in compiled "tocha eager"; do
        (cd benchmarks && OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
            timeout "$CPU_BENCH_S" python3 run.py --quick --filter "$filter" --json "$OUT/bench_cpu_${filter// /_}.json") 2>&1 \
            | tee -a "$OUT/bench_cpu.log"
    done
fi

if [ "${DEMO_S:-90}" != 0 ]; then
    timeout "${DEMO_S:-90}" python3 examples/digits.py --device cuda --quick 2>&1 | tee "$OUT/demo.log" | tail -n 15
fi
