#!/usr/bin/env bash
# Installs the host page of the MCP Apps browser test (examples/apps/host): the official
# TypeScript client, the official host bridge (@modelcontextprotocol/ext-apps), esbuild and
# puppeteer-core, pinned in examples/apps/host/package-lock.json and installed with npm ci
# (skipped when up to date); then bundles host.js into dist/host.js with esbuild. Nothing
# downloads a browser: the test drives the chromium on PATH (Debian's chromium package).
#
#   bash scripts/apps-host.sh                 (make test-apps runs it, then the test)
#   bash scripts/apps-host.sh --update-lock   regenerate the lock file
#
# Needs npm and Node >= 20 (the bridge's minimum).
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
host_dir="$(cd "$script_dir/.." && pwd)/examples/apps/host"

update_lock=0
case "${1:-}" in
  "") ;;
  --update-lock) update_lock=1 ;;
  -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "apps-host.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "apps-host.sh: error: '$tool' is not installed or not on PATH" >&2
    exit 2
  fi
done
node_major="$(node --version | sed -E 's/^v([0-9]+).*/\1/')"
if ((node_major < 20)); then
  echo "apps-host.sh: error: Node >= 20 is needed, found $(node --version)" >&2
  exit 2
fi

# The lock file is written without "resolved" URLs, so it names no registry: npm ci fetches from
# whichever registry the machine's npm is configured for.
npm_flags=(--no-audit --no-fund --loglevel=error)
lock_flags=(--lockfile-version 3 --omit-lockfile-registry-resolved --save-exact)
if ((update_lock)) || [[ ! -f "$host_dir/package-lock.json" ]]; then
  echo "apps-host.sh: writing examples/apps/host/package-lock.json (commit it)" >&2
  rm -rf "$host_dir/node_modules" "$host_dir/package-lock.json"
  (cd "$host_dir" && npm install "${npm_flags[@]}" "${lock_flags[@]}") >&2
elif [[ ! -f "$host_dir/node_modules/.package-lock.json" ||
  "$host_dir/package-lock.json" -nt "$host_dir/node_modules/.package-lock.json" ||
  "$host_dir/package.json" -nt "$host_dir/node_modules/.package-lock.json" ]]; then
  echo "apps-host.sh: npm ci in examples/apps/host/" >&2
  (cd "$host_dir" && npm ci "${npm_flags[@]}") >&2
fi

(cd "$host_dir" && ./node_modules/.bin/esbuild host.js --bundle --format=esm --platform=browser --target=es2022 \
  --log-level=warning --outfile=dist/host.js)
echo "apps-host.sh: bundled examples/apps/host/dist/host.js" >&2
