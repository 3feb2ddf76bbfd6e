# Change a tracked file and hide it from git status.
set -e
echo "hidden change" >> src/a.go
git update-index --skip-worktree src/a.go
