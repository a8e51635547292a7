#!/bin/sh
# Install the launcher (.desktop) and icons for the current user, pointing at a bundle.
#   packaging/linux/install-desktop-entry.sh [/path/to/dist/browserdeck]
# Without an argument the `browserdeck` on PATH is used.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
app_id=io.github.browserdeck.BrowserDeck
data=${XDG_DATA_HOME:-$HOME/.local/share}
bundle=${1:-}
if [ -n "$bundle" ]; then
  exe="$(cd "$bundle" && pwd)/browserdeck"
  icons="$(cd "$bundle" && pwd)/_internal/resources/icons/hicolor"
  [ -d "$icons" ] || icons="$(cd "$bundle" && pwd)/resources/icons/hicolor"
  desktop="$here/$app_id.desktop"
  [ -f "$desktop" ] || desktop="$(cd "$bundle" && pwd)/_internal/resources/linux/$app_id.desktop"
else
  exe=$(command -v browserdeck || true)
  [ -n "$exe" ] || { echo "browserdeck is not on PATH; pass the bundle directory" >&2; exit 1; }
  icons="$here/../../resources/icons/hicolor"
  desktop="$here/$app_id.desktop"
fi
mkdir -p "$data/applications"
sed "s|^Exec=browserdeck|Exec=$exe|" "$desktop" > "$data/applications/$app_id.desktop"
for dir in "$icons"/*/apps; do
  size=$(basename "$(dirname "$dir")")
  mkdir -p "$data/icons/hicolor/$size/apps"
  cp "$dir/$app_id.png" "$data/icons/hicolor/$size/apps/"
done
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$data/applications" || true
echo "installed $data/applications/$app_id.desktop -> $exe"
