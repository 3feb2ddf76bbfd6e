#!/usr/bin/env bash
# The whole test suite: formatting, vet, and every Go test with the race
# detector, including the interop tests against real MCP peers from npm
# (installed into interop/node_modules from the pinned lock file).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -f interop/package-lock.json ]; then
  if [ ! -d interop/node_modules ] || [ interop/package-lock.json -nt interop/node_modules/.package-lock.json ]; then
    echo "== npm ci (interop peers)"
    npm ci --prefix interop --no-audit --no-fund --loglevel=error
  fi
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './interop/node_modules/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== cross-build: windows/amd64, darwin/arm64; go vet (tests included) under GOOS=windows"
GOOS=windows GOARCH=amd64 go build ./...
GOOS=darwin GOARCH=arm64 go build ./...
# The tests of these packages drive real Unix processes (signals, process
# groups, shell scripts): vetted on Unix only.
unix_tests='/internal/(app|faults|provider/(local|mcp|workers))$'
GOOS=windows GOARCH=amd64 go vet $(GOOS=windows go list ./... | grep -Ev "$unix_tests")

echo "== go test -race"
go test -race -count=1 ./...

echo "== deploy/ (its own module: Kubernetes manifests against the API types)"
(cd deploy && go vet ./... && go test -count=1 ./...)

echo "== go test (heavy interop that skips under -race: GitHub's OpenAPI document, PocketBase)"
go test -count=1 -run 'GitHub|PocketBase' ./internal/provider/openapi/
