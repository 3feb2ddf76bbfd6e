# Destroy the user's uncommitted work.
set -e
git reset -q --hard
git clean -q -fd
