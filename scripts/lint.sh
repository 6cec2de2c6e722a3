#!/usr/bin/env bash
# make lint: go vet, staticcheck and golangci-lint (configuration in .golangci.yml) at pinned
# versions. The linters are built once with `go install` into .tools/bin (ignored by git) and
# rebuilt only when the pinned version changes.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION="${STATICCHECK_VERSION:-v0.8.2}"     # honnef.co/go/tools
GOLANGCI_LINT_VERSION="${GOLANGCI_LINT_VERSION:-v2.15.0}" # github.com/golangci/golangci-lint/v2
ROOT="$PWD"
BIN="$ROOT/.tools/bin"
mkdir -p "$BIN"

# install NAME VERSION PACKAGE: go install PACKAGE@VERSION into $BIN unless that version is there.
install() {
  local name=$1 version=$2 pkg=$3 stamp="$BIN/.$1.version"
  if [[ -x "$BIN/$name" && "$(cat "$stamp" 2>/dev/null)" == "$version" ]]; then
    return
  fi
  echo "lint: installing $name $version"
  GOBIN="$BIN" go install "$pkg@$version"
  echo "$version" >"$stamp"
}
install staticcheck "$STATICCHECK_VERSION" honnef.co/go/tools/cmd/staticcheck
install golangci-lint "$GOLANGCI_LINT_VERSION" github.com/golangci/golangci-lint/v2/cmd/golangci-lint

# The root module, then the two modules of their own: bench/ (the peer comparison, which
# imports go-sdk and mcp-go) and interop/goclients (the go-sdk and mcp-go interop clients).
status=0
for mod in . bench interop/goclients; do
  echo "lint: module $mod"
  (
    cd "$mod"
    ok=0
    echo "lint: go vet"
    go vet ./... || ok=1
    echo "lint: staticcheck $STATICCHECK_VERSION"
    "$BIN/staticcheck" ./... || ok=1
    echo "lint: golangci-lint $GOLANGCI_LINT_VERSION (.golangci.yml)"
    # --allow-serial-runners: wait for another run on this machine (they share a lock) instead
    # of failing.
    "$BIN/golangci-lint" run --allow-serial-runners --config "$ROOT/.golangci.yml" ./... || ok=1
    exit $ok
  ) || status=1
done
# The size rules of CONTRIBUTING over the library (not the examples, the tests or interop/): no
# non-test file over 600 lines, no function over 80.
echo "lint: sizes (scripts/sizes.go)"
go run scripts/sizes.go core ext session middleware mcphttp stdio auth client otelmcp redisstore internal || status=1
if [[ $status -ne 0 ]]; then
  echo "lint: FAILED (fix the findings above; each line names the file, the line and the check)" >&2
else
  echo "lint: clean"
fi
exit $status
