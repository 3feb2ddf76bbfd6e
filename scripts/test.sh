#!/usr/bin/env bash
# The whole test suite: formatting, vet, golangci-lint, and every Go test with the race
# detector, including the interop tests against real MCP peers from npm
# (installed into interop/node_modules from the pinned lock file).
set -euo pipefail
cd "$(dirname "$0")/.."

# --- step timing: every step's wall time, printed at the end
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

step "golangci-lint (pinned; .golangci.yml)"
# The pinned release, so every machine runs the same checks: the one in
# GOPATH/bin when it is that release, else installed into the temp dir.
golangci_version=2.15.0
golangci="$(go env GOPATH)/bin/golangci-lint"
if ! "$golangci" version 2>/dev/null | grep -q "version $golangci_version "; then
  GOBIN="$tmp/bin" GOFLAGS= go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v$golangci_version"
  golangci="$tmp/bin/golangci-lint"
fi
"$golangci" run ./...
# examples/notes is a module of its own, which ./... does not reach; the
# same rules apply to it.
(cd examples/notes && "$golangci" run --config ../../.golangci.yml ./...)

# --- race run and skip summary: go vet ran above, so the tests
# skip their own vet pass. The race build of every package is made once,
# then two shards run at once: the packages whose tests mostly wait (fault
# injection against misbehaving upstreams, the npm peers, the real worker
# CLIs' --help and status: 93 s, 97 s and 62 s of test time measured under
# -race on a loaded 2-core machine, against 3 to 20 s for the others), then the
# heavy interop and the index's differential test, which skip under -race (GitHub's OpenAPI document,
# PocketBase), beside everything else, whose time is mostly compiling and
# linking race test binaries: the waiting overlaps the CPU work instead of
# adding to it. Each shard's results and failures print as they come
# (scripts/testsummary -live); at the end, every skipped test with its
# reason and the slowest packages.
step "go test -race (two shards) and the heavy interop without -race"
go build -o "$tmp/testsummary" ./scripts/testsummary
go build -race ./...
waiting_pkgs=(./internal/tests/faults ./interop ./internal/provider/workers)
others=$(go list ./... | grep -v -e '/internal/tests/faults$' -e '/interop$' -e '/internal/provider/workers$')
race() { go test -race -count=1 -vet=off -json "$@"; }
fail_event() { echo "{\"Action\":\"fail\",\"Package\":\"$1\"}"; } # go test failed outside its JSON
{
  race -p 3 "${waiting_pkgs[@]}" || fail_event "go test -race ${waiting_pkgs[*]}"
  go test -count=1 -vet=off -json -run 'GitHub|PocketBase' ./internal/provider/openapi/ || fail_event "heavy interop"
  go test -count=1 -vet=off -json -run 'TestFastPathsAgree' ./internal/index/ || fail_event "index differential"
  # The hostile scripts' bounds (each bomb ends within its limit + 1 s), which
  # the race detector's slowdown would make meaningless: once without it.
  go test -count=1 -vet=off -json -run 'TestHostileScripts|TestHostileNeighbour|TestScriptHostile' ./internal/tests/faults/ ./internal/jsrun/ ./internal/provider/builtin/ || fail_event "hostile scripts"
} | tee "$tmp/waiting.json" | "$tmp/testsummary" -live &
waiting=$!
race_status=0
# shellcheck disable=SC2086 # one package path per word
race $others | tee "$tmp/others.json" | "$tmp/testsummary" -live || race_status=$?
wait "$waiting" || race_status=$?
cat "$tmp/others.json" "$tmp/waiting.json" | "$tmp/testsummary" -report || race_status=$?
[ "$race_status" -eq 0 ] || { echo "go test failed"; exit 1; }
# --- end race run

step "the in-process model runtime (-tags onnx): vet, lint and its tests"
# index.semantic.model's runtime (GoMLX, pure Go) is linked only with the
# onnx build tag; the race run above built without it. Its packages and the
# tests that differ with it: the model against the reference forward pass
# (small and MiniLM-L6 shapes), malformed folders, the app's wiring.
onnx_pkgs=(./internal/embedding/... ./internal/app/ ./bench/retrieval/)
go vet -tags onnx "${onnx_pkgs[@]}"
"$golangci" run --build-tags onnx "${onnx_pkgs[@]}"
go test -tags onnx -count=1 ./internal/embedding/localmodel/
go test -tags onnx -count=1 -run 'ModelFolder' ./internal/app/ ./bench/retrieval/

step "cross-compile and vet: windows/amd64, darwin/arm64 (tests included)"
# go vet type-checks every package and its tests for the target, which is
# what a cross-build would prove, at the cost of one compile instead of two.
# The tests of these packages drive real Unix processes (signals, process
# groups, shell scripts): vetted on Unix only.
unix_tests='/internal/(app|tests/faults|provider/(local|mcp|workers))$'
GOOS=windows GOARCH=amd64 go vet $(GOOS=windows go list ./... | grep -Ev "$unix_tests")
GOOS=darwin GOARCH=arm64 go vet ./...

step "deploy/ (its own module: Kubernetes manifests against the API types)"
(cd deploy && go vet ./... && go test -count=1 ./...)

step "examples/notes (its own module: a provider written against the public package only)"
(cd examples/notes && go vet ./... && go test -race -count=1 ./... && GOOS=windows go vet ./...)
