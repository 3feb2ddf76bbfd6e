# Leave a writer behind that escapes the process group.
setsid sh -c 'sleep 1; echo late > late.txt' > /dev/null 2>&1 < /dev/null &
