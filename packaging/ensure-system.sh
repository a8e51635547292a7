#!/bin/sh
# Installs what browserdeck needs from the OS, only when it is missing.
#   ensure-system.sh browser  -> a Chrome/Chromium binary (and, beside Debian's chromium,
#                                its headless shell: headless profiles start faster on it)
#   ensure-system.sh test     -> plus Xvfb, a tray host, a window manager and Qt's xcb
#                                libraries (for tests)
# As root with apt-get it installs Debian packages; otherwise it says what to install.
set -eu
what=${1:-browser}

have_browser() {
  [ -n "${BROWSERDECK_CHROME:-}" ] && [ -x "${BROWSERDECK_CHROME}" ] && return 0
  for p in /usr/lib/chromium/chromium /usr/bin/chromium /usr/bin/chromium-browser \
           /usr/bin/google-chrome /usr/bin/google-chrome-stable /opt/google/chrome/chrome \
           "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome" \
           "/Applications/Chromium.app/Contents/MacOS/Chromium"; do
    [ -x "$p" ] && return 0
  done
  return 1
}

can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

updated=0
apt_install() {
  if [ "$updated" = 0 ]; then
    apt-get update -qq >/dev/null
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing_pkgs() {
  out=""
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || out="$out $pkg"
  done
  echo "$out"
}

if ! have_browser; then
  if can_apt; then
    echo "browserdeck: no Chrome/Chromium found; installing Debian's chromium (apt)…"
    apt_install chromium
  else
    cat >&2 <<'MSG'
browserdeck: no Chrome or Chromium was found, and this is not a root shell with apt.
  Install one of them, e.g.:
    Debian/Ubuntu:  sudo apt-get install chromium     (or Google Chrome from google.com/chrome)
    Fedora:         sudo dnf install chromium
    macOS/Windows:  install Google Chrome
  or point BROWSERDECK_CHROME (or the executablePath setting) at a Chrome/Chromium binary.
MSG
    exit 1
  fi
fi

# Debian's chromium-headless-shell (same version as chromium) is what headless managed
# profiles launch when it is there: it starts on about half the CPU (docs/mcp.md). Only
# beside Debian's chromium, so the two stay the same version; optional otherwise.
if command -v dpkg-query >/dev/null 2>&1 && [ -z "$(missing_pkgs chromium)" ] \
   && [ -n "$(missing_pkgs chromium-headless-shell)" ]; then
  if can_apt; then
    echo "browserdeck: installing Debian's chromium-headless-shell for headless profiles (apt)…"
    apt_install chromium-headless-shell
  else
    echo "browserdeck: optional: \`sudo apt-get install chromium-headless-shell\` starts headless profiles faster" >&2
  fi
fi

# Qt (PySide6) needs these shared libraries to start even offscreen.
qt_libs="libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 libglib2.0-0"
if [ "$what" = test ]; then
  pkgs="$qt_libs xvfb xauth trayer openbox x11-utils libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0 libxcb-shape0 libxcb-randr0 libxcb-render-util0 libxcb-image0 libxcb-xinerama0"
else
  pkgs="$qt_libs"
fi
if command -v dpkg-query >/dev/null 2>&1; then
  need=$(missing_pkgs $pkgs)
  if [ -n "$need" ]; then
    if can_apt; then
      echo "browserdeck: installing OS packages:$need"
      # shellcheck disable=SC2086
      apt_install $need
    else
      echo "browserdeck: please install these packages:$need" >&2
      [ "$what" = test ] && exit 1
    fi
  fi
fi
exit 0
