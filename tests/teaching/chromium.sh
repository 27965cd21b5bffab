# tests/teaching/chromium.sh - headless Chromium for the page tests, sourced
# after tests/tap.sh (it needs $work):
#
#   . "$(dirname "$0")/chromium.sh"   # sets $browser, or prints the TAP skip and exits 77
#   headless --dump-dom "file://$page" > page.dom
#   is_png FILE                        the file starts with the PNG signature
#
# Chromium missing: installed with apt-get when run as root (tools/setup.sh
# does so too); the test skips (77) only when it cannot be installed.
find_browser() { command -v chromium || command -v chromium-browser || true; }
browser=$(find_browser)
if [ -z "$browser" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "# chromium is missing: apt-get install -y chromium"
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }
  } >"$work/apt.log" 2>&1 || tail -3 "$work/apt.log" | sed 's/^/# /'
  browser=$(find_browser)
fi
if [ -z "$browser" ]; then
  echo "1..0 # SKIP chromium is not installed and cannot be installed here (apt-get install -y chromium as root)"
  exit 77
fi

# headless ARGS...: one Chromium run with a profile of its own, at most 90 s,
# its console on stderr.
headless() {
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d -p "$work")" --enable-logging=stderr --v=0 "$@"
}

is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ]; }
