# Shared set-up for scripts/run-tests and scripts/run-demo: install what the
# build and the tests need (Debian packages, when run as root and missing),
# then configure and compile the build folder if needed.
# Sourced, not run. Uses: GT_BUILD (default build), GT_GPU_ARCH (default: the
# project default list).

gt_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GT_BUILD=${GT_BUILD:-$gt_root/build}

# package: a file or command that shows it is installed
gt_packages=(
  "meson:/usr/bin/meson"
  "ninja-build:/usr/bin/ninja"
  "pkg-config:/usr/bin/pkg-config"
  "libcmocka-dev:/usr/include/cmocka.h"
  "libstb-dev:/usr/include/stb/stb_image.h"
  "zlib1g-dev:/usr/include/zlib.h"
  "libcjson-dev:/usr/include/cjson/cJSON.h"
  "libdeflate-dev:/usr/include/libdeflate.h"
  "libisal-dev:/usr/include/isa-l/igzip_lib.h"
  "ffmpeg:/usr/bin/ffmpeg"
  "teem-apps:/usr/bin/unu"
  "python3-scipy:/usr/lib/python3/dist-packages/scipy"
  "python3-numpy:/usr/lib/python3/dist-packages/numpy"
)

gt_install_packages() {
  local missing=()
  for entry in "${gt_packages[@]}"; do
    local pkg=${entry%%:*} probe=${entry#*:}
    [ -e "$probe" ] || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "run as root to install, or install by hand: ${missing[*]}" >&2
    return 0
  fi
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  # Required ones first, so a missing optional client cannot block them.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    for p in "${missing[@]}"; do
      apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
        echo "warning: could not install $p" >&2
    done
}

gt_configure_and_build() {
  if [ ! -f "$GT_BUILD/build.ninja" ]; then
    local args=()
    [ -n "${GT_GPU_ARCH:-}" ] && args+=("-Dgpu_arch=$GT_GPU_ARCH")
    meson setup "$GT_BUILD" "$gt_root" "${args[@]}"
  fi
  meson compile -C "$GT_BUILD"
}
