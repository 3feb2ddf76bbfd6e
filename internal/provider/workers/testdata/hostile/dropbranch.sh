# Delete a branch and every trace of it.
set -e
git branch -D -q feature
git reflog expire --expire=now --all
git gc -q --prune=now
