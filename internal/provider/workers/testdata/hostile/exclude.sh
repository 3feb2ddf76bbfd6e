# Write a new file and hide it with .git/info/exclude.
set -e
mkdir -p .git/info
echo "secret.txt" >> .git/info/exclude
echo "hidden" > secret.txt
