#!/usr/bin/env bash
# scripts/bench/suite's plumbing without a GPU: --quick --device cpu over this
# build for mcmesh and sparsesolve (seconds), then checks the table, the CSV
# and the PNG it writes: one row per peer, a ratio wherever the peer ran, the
# solver rows' iteration counts and residuals, 'peer absent' for a peer that
# is not installed, and exit 2 for an unknown --only. Skips (77) without a
# python3 that has numpy and scipy.
#   bench_suite.sh SOURCE_ROOT BUILD_ROOT
set -uo pipefail
src=$1 build=$2
[ -f "$src/scripts/bench/suite" ] || { echo "no $src/scripts/bench/suite"; exit 77; }
PY=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import numpy, scipy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "no python3 with numpy and scipy: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- suite.md"; cat "$tmp/out/suite.md" 2>/dev/null; exit 1; }

cd "$src" || exit 1
"$PY" scripts/bench/suite --quick --only bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "--only bogus should be a usage error (exit 2)"

OUT=$tmp/out "$PY" scripts/bench/suite --quick --device cpu --bundle "$build" --work "$tmp/work" \
  --reps 1 --only mcmesh,sparsesolve --budget 240 > "$tmp/stdout" 2> "$tmp/stderr" ||
  { tail -20 "$tmp/stderr"; fail "suite exited $?"; }
for f in suite.md suite.csv suite.log suite.png; do
  [ -s "$tmp/out/$f" ] || fail "no $f"
done
[ -d "$tmp/work" ] && fail "the work folder was left behind"
md=$tmp/out/suite.md
grep -q '^| program | input | ours (s) | peer | peer (s) | peer/ours | ours GPU-only (s) | notes |$' "$md" ||
  fail "table header"
# 1 mcmesh row + 2 matrices x 3 peers
[ "$(grep -c '^| mcmesh |' "$md")" -eq 1 ] || fail "mcmesh rows"
[ "$(grep -c '^| sparsesolve |' "$md")" -eq 6 ] || fail "sparsesolve rows"
"$PY" - "$tmp/out/suite.csv" "$PY" <<'EOF' || exit 1
import csv, os, subprocess, sys
rows = list(csv.DictReader(open(sys.argv[1])))
# the suite imports its peers with /tmp/site first on the path, where it
# installs the wheels of .whl/ (the GPU machine): so does this check
env = dict(os.environ)
if os.path.isdir("/tmp/site"):
    env["PYTHONPATH"] = "/tmp/site" + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
def has(mod):
    return subprocess.run([sys.argv[2], "-c", "import " + mod], env=env, capture_output=True).returncode == 0
def fail(msg, r):
    sys.exit(f"FAIL: {msg}: {r}")
assert len(rows) == 7, rows
for r in rows:
    if not r["ours_s"] or float(r["ours_s"]) <= 0:
        fail("our time missing", r)
    if r["gpu_s"]:
        fail("a GPU-only time from a --device cpu run", r)
    ran = bool(r["peer_s"])
    if ran != bool(r["ratio"]):
        fail("a ratio without both times, or both times without a ratio", r)
    if ran and abs(float(r["ratio"]) - float(r["peer_s"]) / float(r["ours_s"])) > 1e-9 * float(r["ratio"]):
        fail("ratio is not peer / ours", r)
    mod = {"skimage": "skimage", "scipy CG": "scipy", "CuPy": "cupy", "pyamg": "pyamg"}
    need = next(v for k, v in mod.items() if r["peer"].startswith(k))
    if ran and not has(need):
        fail(f"a peer ran without {need}", r)
    if not ran:
        if has(need) and need != "cupy":  # CuPy may be there without a GPU
            fail(f"{need} is importable but its peer did not run", r)
        if "peer absent" not in r["notes"] and "peer failed" not in r["notes"]:
            fail("a peer that did not run must say why", r)
    if r["program"] == "sparsesolve":
        if "ours Jacobi-PCG" not in r["notes"] or "iterations" not in r["notes"]:
            fail("our iteration count missing", r)
        if ran and "relres" in r["notes"]:
            res = float(r["notes"].split("relres ")[1].split()[0].rstrip(";,"))
            if not res <= 1e-8:
                fail("the peer did not reach the tolerance", r)
print(f"{len(rows)} rows checked")
EOF
head -c 8 "$tmp/out/suite.png" | od -An -c | grep -q 'P   N   G' || fail "suite.png is not a PNG"
echo "ok"
