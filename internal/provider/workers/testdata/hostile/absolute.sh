# Under isolation: write to the real project tree by absolute path.
set -e
echo "by absolute path" >> "$FAKE_ROOT/src/a.go"
