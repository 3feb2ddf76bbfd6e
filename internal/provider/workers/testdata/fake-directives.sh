# Shared by the fake worker CLIs: act on "fake:..." directives found in the
# prompt (the goal text), the way a real worker would act on its task.
run_directives() {
  for d in $(printf '%s\n' "$1" | grep -o 'fake:[a-z-]*\(=[^ ]*\)\{0,1\}'); do
    case "$d" in
      fake:write=*) f=${d#fake:write=}; mkdir -p "$(dirname "$f")"; echo "written by the fake worker" >> "$f" ;;
      fake:sleep=*) sleep "${d#fake:sleep=}" ;;
      fake:crash) echo "panic: the fake worker crashed" >&2; exit 3 ;;
      fake:flood) head -c 9000000 /dev/zero | tr '\0' x; echo ;;
      fake:commit) git add -A && git -c user.name=worker -c user.email=w@example.invalid commit -q -m "worker commit" ;;
      fake:noauth) echo "Error: Not logged in. Please run login first." >&2; exit 1 ;;
      fake:long-answer) LONG=1 ;;
      fake:garbage) echo "<html>this is not the format you expect</html>"; exit 0 ;;
      fake:hostile=*) sh "$here/hostile/${d#fake:hostile=}.sh" || exit 4 ;;
      fake:hang) (sleep 300; echo late > descendant-survived) & echo $! > "$FAKE_PIDFILE"; sleep 300 ;;
      fake:hang-trap) (trap '' TERM; exec sleep 300) & echo $! > "$FAKE_PIDFILE"; sleep 300 ;;
    esac
  done
}
