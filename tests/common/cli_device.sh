#!/usr/bin/env bash
# CLI: device choice through the common options.
#  - a bad --device value: usage error (exit 2) naming the valid values
#  - --device cuda without a GPU: exit 4 and exactly one clear line
#  - --device auto without a GPU: CPU with a one-line notice; -q silences it
set -u
probe=$1
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

out=$("$probe" --device gpu 2>&1); rc=$?
check "bad --device exits 2" '[ $rc -eq 2 ]'
check "bad --device names the valid values" '[[ "$out" == *"expected auto, cuda or cpu"* ]]'

out=$(GT_NO_GPU=1 "$probe" --device cuda 2>&1); rc=$?
check "--device cuda without GPU exits 4" '[ $rc -eq 4 ]'
check "one line" '[ "$(printf "%s\n" "$out" | wc -l)" -eq 1 ]'
check "clear message" '[[ "$out" == "device_probe: error: --device cuda: no CUDA GPU is available"* ]]'

err=$(GT_NO_GPU=1 "$probe" --device auto 2>&1 >/dev/null); rc=$?
res=$(GT_NO_GPU=1 "$probe" --device auto 2>/dev/null)
check "auto falls back to cpu" '[ $rc -eq 0 ] && [ "$res" = cpu ]'
check "auto fallback notice is one line" '[ "$(printf "%s\n" "$err" | wc -l)" -eq 1 ] && [[ "$err" == *"computing on the CPU"* ]]'
err=$(GT_NO_GPU=1 "$probe" -q --device auto 2>&1 >/dev/null)
check "-q silences the notice" '[ -z "$err" ]'

# the CUDA context's hardware queues: 1 unless the user set the variable or
# the program asked for more (common/device.h); set before the first CUDA call
q() { env -u CUDA_DEVICE_MAX_CONNECTIONS GT_PROBE_ENV=1 "$@" "$probe" -q 2>/dev/null | sed -n 2p; }
check "one hardware queue by default" '[ "$(q GT_NO_GPU=1)" = CUDA_DEVICE_MAX_CONNECTIONS=1 ]'
check "one hardware queue by default, GPU or not" '[ "$(q X=1)" = CUDA_DEVICE_MAX_CONNECTIONS=1 ]'
check "a program may ask for more" '[ "$(q GT_PROBE_QUEUES=2)" = CUDA_DEVICE_MAX_CONNECTIONS=2 ]'
check "out-of-range requests keep the default" '[ "$(q GT_PROBE_QUEUES=0)" = CUDA_DEVICE_MAX_CONNECTIONS=1 ]'
check "the user's value stays" '[ "$(q CUDA_DEVICE_MAX_CONNECTIONS=6 GT_PROBE_QUEUES=2)" = CUDA_DEVICE_MAX_CONNECTIONS=6 ]'
check "--device cpu sets nothing" '[ "$(env -u CUDA_DEVICE_MAX_CONNECTIONS GT_PROBE_ENV=1 "$probe" --device cpu | sed -n 2p)" = "CUDA_DEVICE_MAX_CONNECTIONS=(unset)" ]'

out=$("$probe" --gpu x 2>&1); rc=$?
check "bad --gpu exits 2" '[ $rc -eq 2 ]'
"$probe" --version | grep -q "gputools" ; check "--version" '[ $? -eq 0 ]'
"$probe" --help | grep -q -- "--device auto|cuda|cpu"; check "--help lists --device" '[ $? -eq 0 ]'
exit $fail
