# Hide the user's uncommitted work in a stash.
set -e
git -c user.name=w -c user.email=w@example.invalid stash push -q -u
