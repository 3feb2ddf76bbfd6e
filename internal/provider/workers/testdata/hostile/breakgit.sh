# Break the repository so that attribution cannot read it.
echo "changed" >> src/a.go
printf '[[[ not a config\n' > .git/config
