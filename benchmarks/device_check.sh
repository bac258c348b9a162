#!/usr/bin/env bash
# The opencl backend on a real GPU, from a bare machine with the GPU driver only (run as root,
# from anywhere in a minidl checkout):
#
#     bash benchmarks/device_check.sh
#
# 1. installs an OpenCL ICD loader (apt-get ocl-icd-libopencl1, else the ocl-icd wheel pyopencl
#    pulls in), 2. registers the driver's OpenCL library as an ICD when the driver ships one
#    (NVIDIA: libnvidia-opencl.so.1, found with ldconfig) but no /etc/OpenCL/vendors/*.icd names
#    it, 3. installs minidl with its test dependencies, 4. runs the opencl tests,
#    5. `python -m minidl.bench --backends opencl`, 6. one keras_cnn training step on the opencl
#    backend and, where a CUDA build of torch is importable, the same step on CUDA, and their ratio.
# Every step has a timeout, and all end within DEVICE_CHECK_BUDGET_S (470 s): under 8 minutes. Everything goes to
# $OUT/device_check.log when OUT is set, else ./device_check.log (and to the terminal).
# DEVICE_CHECK_SKIP_INSTALL=1 leaves out the pip install (a rerun). DEVICE_CHECK_DRY_RUN=1 prints the commands and the registrations instead of making them.
# VENDORS_DIR overrides /etc/OpenCL/vendors; LDCONFIG_OUTPUT stands in for `ldconfig -p` and stops
# the script after the registration (to test that logic in a temporary folder).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

LOG=${OUT:+$OUT/}device_check.log
VENDORS_DIR=${VENDORS_DIR:-/etc/OpenCL/vendors}
DRY=${DEVICE_CHECK_DRY_RUN:-0}
exec > >(tee "$LOG") 2>&1
echo "device_check: $(date -u +%FT%TZ) on $(uname -n), log in $LOG"
status=0

BUDGET_S=${DEVICE_CHECK_BUDGET_S:-470}   # the whole script's time: every step ends by then
run() {   # run SECONDS command...: echoed, stopped after SECONDS (or at the budget's end), its failure recorded
    local limit=$1 left=$((BUDGET_S - SECONDS))
    shift
    [ "$limit" -le "$left" ] || limit=$left
    echo "+ $* (up to ${limit}s)"
    if [ "$DRY" = 1 ]; then return 0; fi
    if [ "$limit" -le 0 ]; then
        echo "device_check: no time left for '$*'"
        status=1
        return 124
    fi
    timeout "$limit" "$@"
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "device_check: '$*' exited with $rc$([ $rc -eq 124 ] && echo " (timed out after ${limit}s)")"
        status=1
    fi
    return $rc
}

# ------------------------------------------------------------------ 1. the ICD loader
if ! ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1'; then
    if command -v apt-get >/dev/null; then
        run 120 apt-get update -qq
        DEBIAN_FRONTEND=noninteractive run 120 apt-get install -y -qq ocl-icd-libopencl1 clinfo
    fi   # else the pip install below brings the ocl-icd wheel with pyopencl's manylinux build
fi

# ------------------------------------------------------------------ 2. the vendor's ICD
# icd_for LIBRARY: the .icd in VENDORS_DIR naming LIBRARY (by file name), if any
icd_for() {
    grep -lsF "$(basename "$1")" "$VENDORS_DIR"/*.icd 2>/dev/null | head -1
}
register_vendor_icds() {
    local listing library name
    listing=${LDCONFIG_OUTPUT:-$(ldconfig -p 2>/dev/null)}
    for name in libnvidia-opencl.so.1 libamdocl64.so libigdrcl.so; do
        library=$(printf '%s\n' "$listing" | awk -v n="$name" '$1 == n {print $NF; exit}')
        [ -n "$library" ] || continue
        if [ -n "$(icd_for "$library")" ]; then
            echo "device_check: $name is registered in $(icd_for "$library")"
            continue
        fi
        echo "device_check: registering $library in $VENDORS_DIR/${name%%.so*}.icd"
        if [ "$DRY" = 1 ]; then continue; fi
        mkdir -p "$VENDORS_DIR" && printf '%s\n' "$library" > "$VENDORS_DIR/${name%%.so*}.icd"
    done
}
register_vendor_icds
if [ -n "${LDCONFIG_OUTPUT:-}" ]; then exit 0; fi   # the registration test stops here

# ------------------------------------------------------------------ 3. minidl and test deps
PY=${PYTHON:-python3}
if [ "${DEVICE_CHECK_SKIP_INSTALL:-0}" != 1 ]; then   # 1: minidl is installed already
    run 240 "$PY" -m pip install -q -e ".[test]"
fi
run 60 "$PY" -c "import pyopencl as cl; [print(p.name, '/', d.name, cl.device_type.to_string(d.type)) for p in cl.get_platforms() for d in p.get_devices()]"
run 30 "$PY" -c "from minidl.backends.opencl import create; print(create().info())"

# ------------------------------------------------------------------ 4. the opencl tests
run 150 "$PY" -m pytest -q -p no:cacheprovider -k opencl tests/test_opencl_*.py \
    tests/test_ops.py tests/test_backend_training.py \
    tests/test_optimizers.py

# ------------------------------------------------------------------ 5. the benchmark
run 120 "$PY" -m minidl.bench --backends opencl --steps 10

# ------------------------------------------------------------------ 6. keras_cnn vs CUDA
run 120 "$PY" - <<'EOF'
import os, sys, time
sys.path.insert(0, "benchmarks")
from bench_zoo import INPUT_SHAPES, measure_minidl, torch_model

BATCH, WARMUP, STEPS = 128, 2, 10
mine = measure_minidl("opencl", "keras_cnn", BATCH, WARMUP, STEPS) / STEPS
print(f"keras_cnn training step, batch {BATCH}: opencl {1e3 * mine:.2f} ms")
try:
    import torch
    cuda = torch.cuda.is_available()
except ImportError:
    cuda = False
if not cuda:
    print("no CUDA build of torch here: no ratio")
    sys.exit(0)
model = torch_model("keras_cnn").cuda().train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
h, w, c = INPUT_SHAPES["keras_cnn"]
x, y = torch.rand(BATCH, c, h, w, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda")

def step():
    optimizer.zero_grad(set_to_none=True)
    loss_fn(model(x), y).backward()
    optimizer.step()

for _ in range(WARMUP):
    step()
torch.cuda.synchronize()
start = time.perf_counter()
for _ in range(STEPS):
    step()
torch.cuda.synchronize()
theirs = (time.perf_counter() - start) / STEPS
print(f"torch CUDA {1e3 * theirs:.2f} ms ({torch.cuda.get_device_name()}); "
      f"opencl / CUDA = {mine / theirs:.1f}")
EOF
echo "device_check: done, status $status"
exit $status
