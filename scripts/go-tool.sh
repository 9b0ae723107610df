# Sourced by the scripts that build a pinned Go CLI for the tests and the release (scripts/build-cosign.sh,
# build-krew.sh, build-syft.sh, build-registry.sh): one copy of the read-the-pin, stamp, build, cache steps.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
#   build_go_tool NAME MODULE VERSION_RE PACKAGE [LDFLAGS]
#
# NAME is the binary (and .cache/<NAME>/ the cache, or $<NAME>_CACHE upper-cased); its pin is tools/<NAME>/go.mod
# (+ go.sum), whose `require MODULE vX.Y.Z` names the version, which must match VERSION_RE. PACKAGE is the main
# package to build; LDFLAGS may use $VERSION (expanded here) for the tool's own version variable.
#
# Output: <cache>/<version>/<NAME>. A stamp of what decides the binary (go.mod, go.sum, the package, the
# ldflags, the Go version and platform) is kept beside it: when it matches, nothing is rebuilt and the call
# returns at once. Needs only `go` and the Go module proxy; no git, no cgo.

build_go_tool() {
    local name=$1 module=$2 version_re=$3 package=$4 ldflags_template=${5:-}
    local root mod version cache_var out stamp stage start ldflags
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    mod="$root/tools/$name"

    if ! command -v go >/dev/null 2>&1; then
        echo "build-$name: the 'go' tool is required (https://go.dev/dl/)" >&2
        return 1
    fi

    version=$(sed -n -E "s|^[[:space:]]*(require[[:space:]]+)?${module//./\\.}[[:space:]]+(v[^[:space:]]+).*|\\2|p" \
        "$mod/go.mod" | head -n1)
    if [[ ! $version =~ $version_re ]]; then
        echo "build-$name: cannot read the $module version from $mod/go.mod" >&2
        return 1
    fi

    ldflags="-s -w ${ldflags_template//\$VERSION/$version}"
    cache_var="${name^^}_CACHE"
    out="${!cache_var:-$root/.cache/$name}/$version"
    stamp=$({
        cat "$mod/go.mod" "$mod/go.sum"
        echo "$package $ldflags"
        go env GOVERSION GOOS GOARCH
    } | sha256sum | cut -d' ' -f1)

    if [[ -f "$out/.stamp" && $(cat "$out/.stamp") == "$stamp" && -x "$out/$name" ]]; then
        echo "$name $version: cached in ${out#"$root"/}"
        return 0
    fi

    echo "building $name $version into ${out#"$root"/} ..."
    start=$SECONDS
    mkdir -p "$out"
    stage=$(mktemp -d "$out/.build.XXXXXX")
    # shellcheck disable=SC2064 # the stage's path is fixed now
    trap "rm -rf '$stage'" EXIT
    (cd "$mod" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$stage/$name" "$package")
    mv -f "$stage/$name" "$out/$name"
    echo "$stamp" >"$out/.stamp"
    echo "$name $version built in $((SECONDS - start)) s"
}
