# A link inside the scope to outside the project, and a write through it.
set -e
ln -s "$FAKE_OUTSIDE" src/out
echo "escaped" > src/out/escaped.txt
