# labels: offline
# report.html renders in headless Chromium without script errors: its script runs to the end
# (it marks <body data-rendered="ok"> and counts the pod bars), with one lifecycle bar per pod.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/setup.sh test)"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || skip "chromium is not installed (scripts/setup.sh test installs it)"

run="$WORK/run"
python3 "$(dirname "$0")/report_fixture.py" "$run"
expect_exit 1 "$ZERODROP" report "$run"
html="$run/report.html"
! grep -Eq '<script[^>]+src=|<link |@import|https?://[^"]*"' <(grep -v 'xmlns="http://www.w3.org/2000/svg"' "$html") \
  || fail "report.html references something outside itself"

chrome() {
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage \
    --user-data-dir="$(mktemp -d "$WORK/profile.XXXXXX")" "$@" 2>>"$WORK/chromium.log"
}
chrome --dump-dom "file://$html" >"$WORK/dom.html" || { cat "$WORK/chromium.log"; fail "chromium failed"; }
expect_grep '<body data-rendered="ok"' "$WORK/dom.html"
expect_grep 'rendered: 4 pod bars' "$WORK/dom.html"
bars=$(grep -o 'class="pod-bar"' "$WORK/dom.html" | wc -l)
[ "$bars" -eq 4 ] || fail "expected one bar per pod (4), found $bars"
grep -q 'class="apply"' "$WORK/dom.html" || fail "no router update marked in the chart"

chrome --screenshot="$WORK/report.png" --window-size=1100,1400 "file://$html" >/dev/null \
  || { cat "$WORK/chromium.log"; fail "chromium could not take a screenshot"; }
[ -s "$WORK/report.png" ] || fail "empty screenshot"
echo "ok"
