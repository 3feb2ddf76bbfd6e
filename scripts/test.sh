#!/usr/bin/env bash
# The whole test suite: formatting, vet, and every Go test with the race
# detector, including the interop tests against real MCP peers from npm
# (installed into interop/node_modules from the pinned lock file).
set -euo pipefail
cd "$(dirname "$0")/.."

# --- step timing (helper F): every step's wall time, printed at the end
# (also when a step fails), so a slow step shows which one it is.
step_names=() step_secs=()
step() { # step NAME: starts timing NAME (and ends the previous step)
  end_step
  step_names+=("$1") step_t0=$SECONDS
  echo "== $1"
}
end_step() {
  if [ -n "${step_t0:-}" ]; then step_secs+=($((SECONDS - step_t0))); step_t0=; fi
}
print_times() {
  end_step
  echo "== step times (total ${SECONDS}s)"
  for i in "${!step_secs[@]}"; do printf '%6ss  %s\n' "${step_secs[$i]}" "${step_names[$i]}"; done
}
tmp=$(mktemp -d)
trap 'print_times; rm -rf "$tmp"' EXIT
# --- end step timing

if [ -f interop/package-lock.json ]; then
  if [ ! -d interop/node_modules ] || [ interop/package-lock.json -nt interop/node_modules/.package-lock.json ]; then
    step "npm ci (interop peers)"
    npm ci --prefix interop --no-audit --no-fund --loglevel=error
  fi
fi

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './interop/node_modules/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...

# --- race run and skip summary (helper F): go vet ran above, so the tests
# skip their own vet pass; test2json output goes through
# scripts/testsummary, which prints failures in full, then every skipped
# test with its reason and the slowest packages.
step "go test -race"
go build -o "$tmp/testsummary" ./scripts/testsummary
go test -race -count=1 -vet=off -json ./... | "$tmp/testsummary"
# --- end race run

step "deploy/ (its own module: Kubernetes manifests against the API types)"
(cd deploy && go vet ./... && go test -count=1 ./...)

step "go test (heavy interop that skips under -race: GitHub's OpenAPI document, PocketBase)"
go test -count=1 -vet=off -run 'GitHub|PocketBase' ./internal/provider/openapi/
