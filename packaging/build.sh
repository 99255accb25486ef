#!/usr/bin/env bash
# Build Cluster Designer's one-folder PyInstaller bundle in dist/<name>/ and smoke-test it.
#
#   make package            # what the README tells you to run (creates .venv first)
#   bash packaging/build.sh # the same, once .venv exists
#
# Environment: BUILD_PYTHON (default .venv/bin/python; not PYTHON, which the Makefile uses for
# the interpreter that creates .venv), SKIP_SMOKE=1 to skip running the binary,
# TARBALL=1 to also write dist/<name>-<version>-linux-<arch>.tar.gz.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${BUILD_PYTHON:-.venv/bin/python}
[ -x "$PY" ] || { echo "build.sh: $PY not found; run 'make venv' first" >&2; exit 1; }
say() { echo "build.sh: $*"; }
fail() { echo "build.sh: FAILED: $*" >&2; exit 1; }

read -r NAME VERSION < <("$PY" -c '
import tomllib
p = tomllib.load(open("pyproject.toml", "rb"))["project"]
print(p["name"], p["version"])') || true
[ -n "${VERSION:-}" ] || fail "could not read name and version from pyproject.toml"
say "building $NAME $VERSION"

# PyInstaller (and its contrib hooks, which know pyqtgraph's run-time template imports).
if ! "$PY" -c 'import PyInstaller' 2>/dev/null; then
    say "installing pyinstaller into $(dirname "$PY")/.."
    "$PY" -m pip install --quiet --disable-pip-version-check 'pyinstaller>=6.5'
fi

# The bundle copies the installed distribution's metadata (designer.__version__ reads it), so
# the venv must hold this very version of the project; `make venv` installs it editable.
installed=$("$PY" -c "import importlib.metadata as m; print(m.version('$NAME'))" 2>/dev/null || true)
if [ "$installed" != "$VERSION" ]; then
    say "installing $NAME $VERSION into the venv (editable, no deps); found '${installed:-none}'"
    "$PY" -m pip install --quiet --disable-pip-version-check --no-deps -e .
fi

# The PNG app icons must match their SVGs (packaging/render_icons.py re-renders them).
QT_QPA_PLATFORM=offscreen "$PY" packaging/render_icons.py --check \
    || fail "app icon PNGs are stale: run $PY packaging/render_icons.py"

"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/cluster-designer.spec

BUNDLE=dist/$NAME
EXE=$BUNDLE/$NAME
[ -x "$EXE" ] || fail "$EXE was not built"
[ -d "$BUNDLE/_internal/designer/resources/catalog" ] || fail "resources/ is missing from the bundle"

# Desktop integration files, laid out as under a prefix's share/ (install.sh copies them).
SHARE=$BUNDLE/share
mkdir -p "$SHARE/applications" "$SHARE/metainfo" "$SHARE/mime/packages" \
    "$SHARE/icons/hicolor/scalable/apps"
cp packaging/io.github.clusterdesigner.ClusterDesigner.desktop "$SHARE/applications/"
cp packaging/io.github.clusterdesigner.ClusterDesigner.metainfo.xml "$SHARE/metainfo/"
cp packaging/cluster-designer-mime.xml "$SHARE/mime/packages/$NAME.xml"
cp resources/icons/cluster-designer.svg "$SHARE/icons/hicolor/scalable/apps/$NAME.svg"
for size in 16 32 48 64 128 256 512; do
    mkdir -p "$SHARE/icons/hicolor/${size}x${size}/apps"
    cp "resources/icons/cluster-designer-$size.png" "$SHARE/icons/hicolor/${size}x${size}/apps/$NAME.png"
done
cp packaging/install-desktop.sh "$BUNDLE/install.sh"
chmod +x "$BUNDLE/install.sh"

# Validators, where the machine has them (desktop-file-utils, appstream).
if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$SHARE/applications/io.github.clusterdesigner.ClusterDesigner.desktop" \
        || fail "desktop-file-validate"
fi
if command -v appstreamcli >/dev/null; then
    appstreamcli validate --no-net --no-color \
        "$SHARE/metainfo/io.github.clusterdesigner.ClusterDesigner.metainfo.xml" >/dev/null \
        || fail "appstreamcli validate"
fi

if [ "${SKIP_SMOKE:-0}" != 1 ]; then
    out=$(QT_QPA_PLATFORM=offscreen "$EXE" --version) || fail "$EXE --version exited non-zero"
    [[ "$out" == *"$VERSION"* ]] || fail "$EXE --version printed '$out', expected $VERSION"
    QT_QPA_PLATFORM=offscreen "$EXE" examples >/dev/null || fail "$EXE examples"
    example=$(ls resources/examples/*.cluster.json 2>/dev/null | head -n 1 || true)
    if [ -n "$example" ]; then
        QT_QPA_PLATFORM=offscreen "$EXE" evaluate "$example" >/dev/null || fail "$EXE evaluate $example"
    fi
    say "smoke test passed: $out"
fi

if [ "${TARBALL:-0}" = 1 ]; then
    tarball=dist/$NAME-$VERSION-linux-$(uname -m).tar.gz
    tar -C dist -czf "$tarball" "$NAME"
    say "wrote $tarball"
fi
say "bundle ready: $BUNDLE ($(du -sh "$BUNDLE" | cut -f1)); run $EXE, or $BUNDLE/install.sh"
