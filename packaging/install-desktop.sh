#!/usr/bin/env bash
# Install Cluster Designer's desktop integration for the current user (or PREFIX):
# the launcher, the icons, the AppStream metadata and the *.cluster.json MIME type.
#
# From a built bundle (dist/cluster-designer/install.sh) it also links PREFIX/bin/cluster-designer
# to the bundle's executable. From a source checkout (packaging/install-desktop.sh) it installs
# only the desktop files: `cluster-designer` must already be on PATH (pip install, pipx, make venv).
#
#   ./install.sh               # into ~/.local
#   PREFIX=/usr/local sudo -E ./install.sh
#   ./install.sh --uninstall
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-$HOME/.local}
APP_ID=io.github.clusterdesigner.ClusterDesigner
NAME=cluster-designer

if [ -d "$HERE/share/applications" ]; then          # inside the bundle
    SRC_SHARE=$HERE/share
    EXE=$HERE/$NAME
else                                                # packaging/ in a checkout
    ROOT=$(dirname "$HERE")
    SRC_SHARE=$(mktemp -d)
    trap 'rm -rf "$SRC_SHARE"' EXIT
    mkdir -p "$SRC_SHARE/applications" "$SRC_SHARE/metainfo" "$SRC_SHARE/mime/packages" \
        "$SRC_SHARE/icons/hicolor/scalable/apps"
    cp "$HERE/$APP_ID.desktop" "$SRC_SHARE/applications/"
    cp "$HERE/$APP_ID.metainfo.xml" "$SRC_SHARE/metainfo/"
    cp "$HERE/$NAME-mime.xml" "$SRC_SHARE/mime/packages/$NAME.xml"
    cp "$ROOT/resources/icons/$NAME.svg" "$SRC_SHARE/icons/hicolor/scalable/apps/"
    for size in 16 32 48 64 128 256 512; do
        mkdir -p "$SRC_SHARE/icons/hicolor/${size}x${size}/apps"
        cp "$ROOT/resources/icons/$NAME-$size.png" "$SRC_SHARE/icons/hicolor/${size}x${size}/apps/$NAME.png"
    done
    EXE=
fi

files=(applications/$APP_ID.desktop metainfo/$APP_ID.metainfo.xml mime/packages/$NAME.xml
       icons/hicolor/scalable/apps/$NAME.svg)
for size in 16 32 48 64 128 256 512; do files+=(icons/hicolor/${size}x${size}/apps/$NAME.png); done

if [ "${1:-}" = "--uninstall" ]; then
    for f in "${files[@]}"; do rm -f "$PREFIX/share/$f"; done
    [ -L "$PREFIX/bin/$NAME" ] && rm -f "$PREFIX/bin/$NAME"
else
    for f in "${files[@]}"; do install -D -m 644 "$SRC_SHARE/$f" "$PREFIX/share/$f"; done
    if [ -n "$EXE" ]; then
        mkdir -p "$PREFIX/bin"
        ln -sf "$EXE" "$PREFIX/bin/$NAME"
        echo "linked $PREFIX/bin/$NAME -> $EXE"
    fi
fi

# Refresh the caches the desktop reads; each tool is optional.
command -v update-mime-database >/dev/null && update-mime-database "$PREFIX/share/mime" || true
command -v update-desktop-database >/dev/null && update-desktop-database -q "$PREFIX/share/applications" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$PREFIX/share/icons/hicolor" || true
echo "${1:-install} done under $PREFIX/share"
