# shellcheck shell=bash
# The one recipe behind scripts/build-{helm,promtool,cosign,krew,argo-rollouts}.sh, sourced by each: build a tool
# from the Go module pinned by tools/<tool>/go.mod (+ go.sum) into .cache/<tool>/<version>/ (git-ignored), with a
# stamp of its inputs (go.mod, go.sum, the calling script, this file, the Go version) kept beside the binary: when
# the stamp matches, nothing is rebuilt and the script returns at once, so a warm `make unit` costs nothing here.
#
# Needs only `go` and the Go module proxy; no git, no cgo. A caller sets TOOL (its name, as in tools/<TOOL>) and
# MOD (that directory), then: go_tool_require; VERSION=$(go_tool_version <module path>); go_tool_init "$VERSION"
# <cache variable value>; go_tool_cached <outputs...> && exit 0; go_tool_build <package> <ldflags> <binary>;
# whatever else it keeps beside the binary, into "$STAGE"; go_tool_finish <outputs...>.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

go_tool_fail() {
    echo "build-$TOOL: $*" >&2
    exit 1
}

go_tool_require() {
    command -v go >/dev/null 2>&1 || go_tool_fail "the 'go' tool is required (https://go.dev/dl/)"
}

# The version tools/<tool>/go.mod requires a module at (the first `require` line naming it).
go_tool_version() {
    local module=${1//./\\.}
    sed -n -E "s|^[[:space:]]*(require[[:space:]]+)?$module[[:space:]]+(v[^[:space:]]+).*|\2|p" \
        "$MOD/go.mod" | head -n1
}

# Sets OUT (the cache directory of this version: $2 or .cache/<tool>, then the version) and STAMP.
go_tool_init() {
    local caller=${BASH_SOURCE[1]}
    OUT="${2:-$ROOT/.cache/$TOOL}/$1"
    STAMP=$({
        cat "$MOD/go.mod" "$MOD/go.sum" "$caller" "${BASH_SOURCE[0]}"
        go env GOVERSION GOOS GOARCH
    } | sha256sum | cut -d' ' -f1)
}

# True when the stamp matches and every named output (relative to OUT) is there.
go_tool_cached() {
    [[ -f "$OUT/.stamp" && $(cat "$OUT/.stamp") == "$STAMP" ]] || return 1
    local output
    for output in "$@"; do
        [[ -e "$OUT/$output" ]] || return 1
    done
    echo "$TOOL ${LABEL:-${OUT##*/}}: cached in ${OUT#"$ROOT"/}"
}

# Builds one package of the pinned module into "$STAGE/<binary>" (STAGE: a temporary directory inside OUT,
# removed on exit); the caller may add more outputs to STAGE before go_tool_finish.
go_tool_build() {
    local package=$1 ldflags=$2 binary=$3
    echo "building $TOOL ${LABEL:-${OUT##*/}} into ${OUT#"$ROOT"/} ..."
    GO_TOOL_START=$SECONDS
    mkdir -p "$OUT"
    STAGE=$(mktemp -d "$OUT/.build.XXXXXX")
    trap 'rm -rf "$STAGE"' EXIT
    (cd "$MOD" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$STAGE/$binary" "$package")
}

# Moves the named outputs from STAGE into OUT, then writes the stamp (last: a half-built cache is never stamped).
go_tool_finish() {
    local output
    for output in "$@"; do
        rm -rf "${OUT:?}/$output"
        mv -f "$STAGE/$output" "$OUT/$output"
    done
    echo "$STAMP" >"$OUT/.stamp"
    echo "$TOOL ${LABEL:-${OUT##*/}} built in $((SECONDS - GO_TOOL_START)) s"
}
