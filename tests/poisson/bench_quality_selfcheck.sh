#!/usr/bin/env bash
# The quality harness of scripts/bench/poissonrec checks issue 17's targets;
# its --self-check tests the geometry it measures against (samples on each
# analytic surface, exact normals and distances, area-uniform sampling, the
# '+uneven' density ratio, point-triangle distance, mesh topology). Skips
# (77) without a python3 that has numpy and scipy.
#   bench_quality_selfcheck.sh SOURCE_ROOT
set -uo pipefail
src=$1
PY=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import numpy, scipy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "no python3 with numpy and scipy: skipped"; exit 77; }
cd "$src" || exit 1
"$PY" scripts/bench/poissonrec --self-check || exit 1
# an unknown case or modifier is refused before any work
"$PY" scripts/bench/poissonrec --cases roundbox+bogus --prog /bin/true > /dev/null 2>&1 && { echo "FAIL: roundbox+bogus accepted"; exit 1; }
"$PY" scripts/bench/poissonrec --cases torus+noise+noise --prog /bin/true > /dev/null 2>&1 && { echo "FAIL: a repeated modifier accepted"; exit 1; }
exit 0
