# Make the runtime's own git run code: fsmonitor, hooks, a clean filter,
# a textconv driver. Each would touch $FAKE_MARKER.
set -e
printf '#!/bin/sh\ntouch "%s"\n' "$FAKE_MARKER" > .git/evil.sh
chmod +x .git/evil.sh
git config core.fsmonitor "$PWD/.git/evil.sh"
git config filter.evil.clean "sh -c 'touch $FAKE_MARKER; cat'"
git config filter.evil.required true
git config "filter.a=b.clean" "sh -c 'touch $FAKE_MARKER; cat'"
git config "filter.a=b.required" true
git config diff.evil.textconv "$PWD/.git/evil.sh"
git config core.pager "$PWD/.git/evil.sh"
for h in post-checkout pre-commit post-index-change reference-transaction; do cp .git/evil.sh .git/hooks/$h; done
printf '* filter=evil diff=evil\n*.go filter=a=b\n' > .gitattributes
echo "changed" >> src/a.go
