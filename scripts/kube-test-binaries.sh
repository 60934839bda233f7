#!/usr/bin/env bash
# Builds the real Kubernetes control plane that the Kubernetes tests run against (test/support/kube-cluster.ts,
# docs/kubernetes-testing.md): kube-apiserver, kube-controller-manager and kube-scheduler 1.20.2 from Debian
# bookworm's `kubernetes` source package with Debian's Go 1.19, plus Debian's etcd, into a cache outside the clone:
#     ${SLIPWAY_KUBE_CACHE:-$HOME/.cache/slipway/kube-1.20.2}/bin/{etcd,kube-apiserver,kube-controller-manager,kube-scheduler}
# Nothing on npm ships these binaries and Debian packages only kubectl and etcd, so the only source allowed here is
# Debian's source package. 1.20.2 is old and has known CVEs: it is a loopback test fixture, never product code.
#
# Exits at once when the binaries are there. Two runs at the same time (two test files on a fresh machine) are
# serialised by flock, and the second finds the first's binaries. Nothing is installed system-wide: apt runs with
# a private sources list, lists and cache, and the .debs are unpacked with dpkg -x into a build dir in the cache dir,
# removed on exit (about 2 GB while building). Prints one line per stage; on failure, the tail of the build log.
# Needs apt-get, dpkg and network access to a Debian mirror (SLIPWAY_KUBE_APT_MIRROR, deb.debian.org by default).
set -euo pipefail

version=1.20.2
cache="${SLIPWAY_KUBE_CACHE:-$HOME/.cache/slipway/kube-$version}"
bin="$cache/bin"
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler)
mirror="${SLIPWAY_KUBE_APT_MIRROR:-http://deb.debian.org/debian}"

all_present() {
  local name
  for name in "${binaries[@]}"; do [ -x "$bin/$name" ] || return 1; done
}
say() { echo "kube-test-binaries: [${SECONDS}s] $*"; }

if all_present; then exit 0; fi

for tool in apt-get dpkg flock; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "kube-test-binaries: $tool is missing; this script builds from Debian packages and needs a Debian-like host" >&2
    exit 1
  fi
done

mkdir -p "$cache"
exec 9>"$cache/.build.lock"
if ! flock -n 9; then
  say "another run is building into $cache; waiting for it"
  flock 9
fi
# The run that held the lock may have finished the job.
if all_present; then say "binaries are ready in $bin"; exit 0; fi

# The build dir lives in the cache dir, under the lock: what a run killed outright (SIGKILL, no EXIT trap) left
# there is known to be stale, and is removed here.
chmod -R u+w "$cache"/.tmp.* 2>/dev/null || true
rm -rf "$cache"/.tmp.*
tmp="$(mktemp -d "$cache/.tmp.XXXXXX")"
log="$tmp/build.log"
cleanup() {
  # Go marks some of what it unpacks read-only; make it removable first.
  chmod -R u+w "$tmp" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
# Make an interrupted run exit through the EXIT trap too.
trap 'exit 130' INT
trap 'exit 143' TERM
# Runs a step with its output in the log, which is printed (the end of it) only when the step fails.
run() {
  if ! "$@" >>"$log" 2>&1; then
    echo "kube-test-binaries: failed: $*" >&2
    tail -n 60 "$log" >&2
    exit 1
  fi
}

say "building Kubernetes $version test binaries into $bin (temp dir $tmp)"

# 1. Private apt: our own sources list (with deb-src), lists and cache, so the host's apt state is not touched.
mkdir -p "$tmp/apt/lists/partial" "$tmp/apt/cache/archives/partial" "$tmp/apt/sources.list.d" "$tmp/debs"
printf 'deb %s bookworm main\ndeb-src %s bookworm main\n' "$mirror" "$mirror" >"$tmp/apt/sources.list"
apt_options=(
  -o "Dir::Etc::SourceList=$tmp/apt/sources.list"
  -o "Dir::Etc::SourceParts=$tmp/apt/sources.list.d"
  -o "Dir::State::Lists=$tmp/apt/lists"
  -o "Dir::Cache=$tmp/apt/cache"
  -o "Acquire::Languages=none"
)
# As root apt downloads as the _apt user, which cannot write into our mktemp (0700) dir.
if [ "$(id -u)" = 0 ]; then apt_options+=(-o "APT::Sandbox::User=root"); fi

say "apt: reading bookworm package lists from $mirror"
# --error-on=any: an unreachable mirror fails here, not one step later with a puzzling "no deb-src URIs".
run apt-get "${apt_options[@]}" --error-on=any update
say "apt: downloading the kubernetes source package, golang-1.19 and etcd-server"
(cd "$tmp/debs" && run apt-get "${apt_options[@]}" source --download-only kubernetes)
(cd "$tmp/debs" && run apt-get "${apt_options[@]}" download golang-1.19-go golang-1.19-src etcd-server)

say "unpacking the Go toolchain, etcd and the Kubernetes source"
for deb in "$tmp"/debs/*.deb; do run dpkg -x "$deb" "$tmp/root"; done
run tar -xzf "$(echo "$tmp"/debs/kubernetes_*.orig.tar.gz)" -C "$tmp"
source_dir="$tmp/kubernetes-$version"
[ -d "$source_dir" ] || { echo "kube-test-binaries: no kubernetes-$version in the orig tarball" >&2; exit 1; }
run tar -xJf "$(echo "$tmp"/debs/kubernetes_*.debian.tar.*)" -C "$source_dir"
# Debian's own patches (kubectl output escaping, CVE-2021-25743), applied as dpkg-source would.
if command -v patch >/dev/null 2>&1; then
  while read -r name; do
    case "$name" in '' | '#'*) continue ;; esac
    run patch -d "$source_dir" -p1 --forward -s -i "debian/patches/$name"
  done <"$source_dir/debian/patches/series"
else
  say "patch is missing: Debian's patches (they concern kubectl's printing, which is not built) are skipped"
fi

# 2. GOPATH mode, as Kubernetes 1.20 itself builds: module mode fails on this tree ("updates to go.mod needed").
export GOROOT="$tmp/root/usr/lib/go-1.19"
export GOPATH="$tmp/gopath"
export GOCACHE="$tmp/go-build-cache"
# Go's own scratch dir too, so an interrupted build leaves nothing in /tmp beyond $tmp.
export GOTMPDIR="$tmp/go-tmp"
export GO111MODULE=off GOPROXY=off CGO_ENABLED=0 GOFLAGS=
export PATH="$GOROOT/bin:$PATH"
mkdir -p "$GOPATH/src/k8s.io" "$GOTMPDIR"
ln -s "$source_dir" "$GOPATH/src/k8s.io/kubernetes"
# Go derives the import path k8s.io/kubernetes/... from the working directory, so work through the GOPATH link.
cd "$GOPATH/src/k8s.io/kubernetes"
say "toolchain: $(go version)"

# 3. The one generated file the tarball lacks: pkg/generated/openapi/zz_generated.openapi.go. Without it
# openapi.GetOpenAPIDefinitions is undefined. Its inputs are found as build/root/Makefile.generated_files does: every
# package outside vendor/ (staging/src named as vendor/) with a `+k8s:openapi-gen=` tag, minus the code generator's
# examples and the sample apiserver.
say "openapi-gen: building it and generating pkg/generated/openapi"
run go build -o "$tmp/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
openapi_inputs="$(
  find -H . \( -path './_*' -o -path './.*' -o -path ./vendor \) -prune -o -type f -name '*.go' -print |
    sed 's|^\./staging/src|vendor|' |
    xargs grep -l '^// *+k8s:' | xargs grep -l '+k8s:openapi-gen=' |
    grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' |
    xargs -n1 dirname | LC_ALL=C sort -u | sed 's|^|k8s.io/kubernetes/|' | paste -sd, -
)"
run "$tmp/openapi-gen" --logtostderr \
  -i "$openapi_inputs" \
  -p k8s.io/kubernetes/pkg/generated/openapi \
  -O zz_generated.openapi \
  -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
  -r "$tmp/openapi-violations.report" \
  -o "$GOPATH/src"
[ -s pkg/generated/openapi/zz_generated.openapi.go ] || { echo "kube-test-binaries: openapi-gen wrote nothing" >&2; exit 1; }

# 4. The binaries, stamped with their version as hack/lib/version.sh does (clients read /version).
build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
major="${version%%.*}"
minor="${version#*.}"
minor="${minor%%.*}"
ldflags="-s -w"
for package in k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version k8s.io/kubernetes/vendor/k8s.io/component-base/version; do
  ldflags+=" -X $package.gitVersion=v$version -X $package.gitMajor=$major -X $package.gitMinor=$minor"
  ldflags+=" -X $package.gitTreeState=clean -X $package.buildDate=$build_date"
done
say "go build: kube-apiserver, kube-controller-manager, kube-scheduler (the slow part: about 8 CPU-minutes, 4–5 minutes on an idle 2-core machine)"
mkdir -p "$tmp/out"
run go build -trimpath -ldflags "$ldflags" -o "$tmp/out/" ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kube-scheduler
cp "$tmp/root/usr/bin/etcd" "$tmp/out/etcd"

for name in "${binaries[@]}"; do
  run "$tmp/out/$name" --version
done
say "versions: $("$tmp/out/kube-apiserver" --version), $("$tmp/out/etcd" --version | head -n1)"

# 5. Into the cache, each file by rename so a reader never sees half a binary.
mkdir -p "$bin"
for name in "${binaries[@]}"; do
  cp "$tmp/out/$name" "$bin/.$name.partial"
  chmod 755 "$bin/.$name.partial"
  mv -f "$bin/.$name.partial" "$bin/$name"
done
say "done: $(du -sh "$bin" | cut -f1) in $bin"
