#!/usr/bin/env bash
# Build the reference simulator: Batsim 4.2.1 (against Debian's SimGrid) and a pybatsim 3.2.1
# launcher. About 3-4 minutes on 2 cores; see README.md beside this script.
#
# usage: tools/batsim/build.sh [--sources-only] [PREFIX]
#   PREFIX           default ${XDG_CACHE_HOME:-~/.cache}/hdeeprm-batsim
#   --sources-only   only fetch and check the two source archives into PREFIX/src, build nothing
#   BATSIM_SOURCES   a folder holding batsim-4.2.1.tar.gz and redox-b5b9fa3.tar.gz: used instead
#                    of downloading them (either way they are checked against pinned SHA-256 sums)
#   PYBATSIM_PYTHON  a Python >= 3.8 that runs the pybatsim schedulers (default: python3 on PATH;
#                    pyzmq is installed into it if missing)
# Idempotent: a PREFIX whose Batsim says 4.2.1 and whose pybatsim launcher starts is reused as it
# is (nothing installed or downloaded); otherwise only the unfinished steps run. Progress goes to
# standard error, the tools' output to PREFIX/build.log; standard output gets two lines:
#   PREFIX/bin/batsim   -p platform.xml -w workload.json -e OUT/out -s tcp://localhost:PORT
#   PREFIX/bin/pybatsim SCHEDULER -s tcp://*:PORT      (schedulers: fcfsSched, easyBackfill, ...)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SOURCES_ONLY=false
if [ "${1:-}" = --sources-only ]; then
  SOURCES_ONLY=true
  shift
fi
P=$(realpath -m "${1:-${XDG_CACHE_HOME:-$HOME/.cache}/hdeeprm-batsim}")

die() {
  echo "tools/batsim/build.sh: $*" >&2
  exit 1
}
step() { echo "==> $*" >&2; }

# 0. Reuse a finished prefix.
if ! $SOURCES_ONLY && [ "$("$P/bin/batsim" --version 2>/dev/null)" = "4.2.1" ] &&
  "$P/bin/pybatsim" --version >/dev/null 2>&1; then
  step "Batsim 4.2.1 and pybatsim already in $P"
  echo "$P/bin/batsim"
  echo "$P/bin/pybatsim"
  exit 0
fi

PY=${PYBATSIM_PYTHON:-$(command -v python3 || true)}
[ -n "$PY" ] || die "python3 not found: install it, or set PYBATSIM_PYTHON to a Python >= 3.8"
SRC=$P/src
LOG=$P/build.log
mkdir -p "$SRC" "$P/bin" "$P/lib/pkgconfig" 2>/dev/null || die "cannot create $P"
: >"$LOG"
export PKG_CONFIG_PATH=$P/lib/pkgconfig
NPROC=$(nproc 2>/dev/null || echo 2)

# Pinned sources. Each archive is accepted when its SHA-256 is the pinned one (the archives of
# BATSIM_SOURCES), or when the files it holds are (a forge's archive of the same commit: it adds
# a top folder and compresses differently). TREE: SHA-256 of `sha256sum` over every file,
# sorted by path (see tree_sum).
BATSIM_FILE=batsim-4.2.1.tar.gz
BATSIM_SHA256=34025cf24bee5b86af06950545023c414904e41c7b1b464879edafbeb9b5cc00
BATSIM_TREE=801704f5c6760e409e902a90cd4833dfddddd6ba74942b32d6693b026f279e2d
BATSIM_URLS=(
  https://framagit.org/batsim/batsim/-/archive/v4.2.1/batsim-v4.2.1.tar.gz
  https://github.com/oar-team/batsim/archive/refs/tags/v4.2.1.tar.gz
)
REDOX_COMMIT=b5b9fa31a6fba3f7ce872e623958cb27b7686039
REDOX_FILE=redox-b5b9fa3.tar.gz
REDOX_SHA256=033ce235a51fb356b17d4e0b72d8c1014825bee490a4ed439f0600923643cd62
REDOX_TREE=cd514db15784c297b10df3403b04cf422f0fe034b12a4e5d2e18589e03f41282
REDOX_URLS=("https://github.com/hmartiro/redox/archive/$REDOX_COMMIT.tar.gz")

tree_sum() {
  (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
    sha256sum | cut -d' ' -f1
}

download() { # OUT URL...: the first URL that answers
  local out=$1 url
  shift
  command -v curl >/dev/null || command -v wget >/dev/null ||
    die "neither curl nor wget is installed: install one, or set BATSIM_SOURCES (see README.md)"
  mkdir -p "$(dirname "$out")"
  for url in "$@"; do
    step "downloading $url"
    if command -v curl >/dev/null; then
      curl -fsL --retry 2 --connect-timeout 20 -o "$out.part" "$url" && mv "$out.part" "$out" &&
        return 0
    else
      wget -q -T 20 -O "$out.part" "$url" && mv "$out.part" "$out" && return 0
    fi
  done
  rm -f "$out.part"
  die "cannot download $(basename "$out") (no network?): set BATSIM_SOURCES to a folder holding it"
}

unpack() { # NAME FILE SHA256 TREE URL...: the checked sources in $SRC/NAME
  local name=$1 file=$2 sum=$3 tree=$4 archive root top
  shift 4
  if [ -n "${BATSIM_SOURCES:-}" ]; then
    archive=$BATSIM_SOURCES/$file
    [ -f "$archive" ] || die "BATSIM_SOURCES=$BATSIM_SOURCES has no $file"
  else
    archive=$SRC/downloads/$file
    [ -f "$archive" ] || download "$archive" "$@"
  fi
  rm -rf "${SRC:?}/$name" "$SRC/$name.tmp"
  mkdir -p "$SRC/$name.tmp"
  tar -xzf "$archive" -C "$SRC/$name.tmp" 2>>"$LOG" || die "$archive is not a .tar.gz archive"
  root=$SRC/$name.tmp
  # A single top folder (a forge's archive): its content is the source tree.
  if [ "$(find "$root" -mindepth 1 -maxdepth 1 | wc -l)" = 1 ]; then
    top=$(find "$root" -mindepth 1 -maxdepth 1)
    [ ! -d "$top" ] || root=$top
  fi
  if [ "$(sha256sum <"$archive" | cut -d' ' -f1)" != "$sum" ] && [ "$(tree_sum "$root")" != "$tree" ]; then
    rm -rf "$SRC/$name.tmp"
    [ -n "${BATSIM_SOURCES:-}" ] || rm -f "$archive"
    die "$archive is not the pinned $file (SHA-256 of neither the archive nor its files match)"
  fi
  mv "$root" "$SRC/$name"
  rm -rf "$SRC/$name.tmp"
}

if $SOURCES_ONLY; then
  unpack redox "$REDOX_FILE" "$REDOX_SHA256" "$REDOX_TREE" "${REDOX_URLS[@]}"
  unpack batsim "$BATSIM_FILE" "$BATSIM_SHA256" "$BATSIM_TREE" "${BATSIM_URLS[@]}"
  step "sources checked: $SRC/redox $SRC/batsim"
  exit 0
fi

# 1. Debian packages: SimGrid, build tools, Batsim's libraries, hiredis + libev for redox.
PKGS=(libsimgrid-dev meson ninja-build cmake g++ pkg-config libboost-dev libboost-locale-dev
  libboost-regex-dev rapidjson-dev libpugixml-dev libdocopt-dev cppzmq-dev libzmq3-dev
  libgmp-dev libhiredis-dev libev-dev)
if ! command -v dpkg >/dev/null || ! dpkg -s "${PKGS[@]}" >/dev/null 2>&1; then
  command -v apt-get >/dev/null ||
    die "needs apt-get (Debian/Ubuntu) to install SimGrid and the build tools; elsewhere see README.md (Nix, HDEEPRM_BATSIM)"
  SUDO=()
  if [ "$(id -u)" != 0 ]; then
    { command -v sudo >/dev/null && sudo -n true 2>/dev/null; } ||
      die "installing the build packages needs root: run as root, or first: sudo apt-get install ${PKGS[*]}"
    SUDO=(sudo -n)
  fi
  step "1/5 apt-get install SimGrid and the build tools"
  ${SUDO[@]+"${SUDO[@]}"} apt-get update -q >>"$LOG" 2>&1 || die "apt-get update failed (no network?), see $LOG"
  ${SUDO[@]+"${SUDO[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${PKGS[@]}" >>"$LOG" 2>&1 || die "apt-get install failed, see $LOG"
fi

# 2. intervalset: a small stand-in with the API Batsim 4.2.1 uses (static library).
if [ ! -f "$P/lib/pkgconfig/intervalset.pc" ]; then
  step "2/5 intervalset"
  rm -rf "$SRC/intervalset-build"
  {
    meson setup "$SRC/intervalset-build" "$HERE/intervalset" --prefix="$P" --libdir=lib \
      --buildtype=release -Ddefault_library=static &&
      ninja -C "$SRC/intervalset-build" install
  } >>"$LOG" 2>&1 || die "building intervalset failed, see $LOG"
fi

# 3. redox, Batsim 4's Redis client (CMake; it has no .pc file, so write one with an rpath).
if [ ! -f "$P/lib/pkgconfig/redox.pc" ]; then
  step "3/5 redox $REDOX_COMMIT"
  unpack redox "$REDOX_FILE" "$REDOX_SHA256" "$REDOX_TREE" "${REDOX_URLS[@]}"
  {
    cmake -S "$SRC/redox" -B "$SRC/redox/build" -DCMAKE_INSTALL_PREFIX="$P" \
      -DCMAKE_BUILD_TYPE=Release -Dstatic_lib=OFF &&
      make -C "$SRC/redox/build" -j"$NPROC" install
  } >>"$LOG" 2>&1 || die "building redox failed, see $LOG"
  libdir=$(dirname "$(find "$P"/lib* -maxdepth 1 -name 'libredox.so' | head -1)")
  printf 'Name: redox\nDescription: C++11 Redis client\nVersion: 0.3.0\nLibs: -L%s -Wl,-rpath,%s -lredox -lhiredis -lev -lpthread\nCflags: -I%s/include\n' \
    "$libdir" "$libdir" "$P" >"$P/lib/pkgconfig/redox.pc"
fi

# 4. Batsim 4.2.1.
if [ "$("$P/bin/batsim" --version 2>/dev/null)" != "4.2.1" ]; then
  step "4/5 Batsim 4.2.1 (the longest step)"
  unpack batsim "$BATSIM_FILE" "$BATSIM_SHA256" "$BATSIM_TREE" "${BATSIM_URLS[@]}"
  {
    meson setup "$SRC/batsim/build" "$SRC/batsim" --prefix="$P" --buildtype=release &&
      ninja -C "$SRC/batsim/build" -j"$NPROC" install
  } >>"$LOG" 2>&1 || die "building Batsim failed, see $LOG"
fi

# 5. pybatsim 3.2.1 without its pyzmq<23 pin (which does not build on Python 3.11).
step "5/5 pybatsim 3.2.1"
"$PY" -c "import zmq" 2>/dev/null || "$PY" -m pip install -q pyzmq >>"$LOG" 2>&1 ||
  die "cannot install pyzmq into $PY (no network to PyPI?), see $LOG"
if [ ! -d "$P/pybatsim-3.2.1/batsim" ]; then
  "$PY" -m pip install -q --no-deps --target "$P/pybatsim-3.2.1" pybatsim==3.2.1 \
    "procset>=1,<2" "sortedcontainers>=2.3,<3" "docopt>=0.6.2,<0.7" >>"$LOG" 2>&1 ||
    die "cannot install pybatsim 3.2.1 (no network to PyPI?), see $LOG"
fi
cat >"$P/bin/pybatsim" <<LAUNCHER
#!/usr/bin/env bash
# pybatsim 3.2.1: pybatsim SCHEDULER -s tcp://*:PORT [-o OPTIONS_JSON] [-v LEVEL]
PYTHONPATH="$P/pybatsim-3.2.1\${PYTHONPATH:+:\$PYTHONPATH}" exec "$PY" -m batsim.cmds.launcher "\$@"
LAUNCHER
chmod +x "$P/bin/pybatsim"

# 6. Check.
[ "$("$P/bin/batsim" --version 2>/dev/null)" = "4.2.1" ] || die "$P/bin/batsim does not run"
"$P/bin/pybatsim" --version >/dev/null 2>&1 || die "the pybatsim launcher does not start"
echo "$P/bin/batsim"
echo "$P/bin/pybatsim"
