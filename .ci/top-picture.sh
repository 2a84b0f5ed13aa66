#!/usr/bin/env bash
# Draws docs/img/top.png: `latte-telemetry top` watching the watched_service example
# in tmux, its screen captured with colours (`capture-pane -e`), turned into HTML by
# Debian's `aha` and photographed by headless Chromium. Run by hand from the
# repository root (needs tmux, aha, chromium); takes about a minute.
set -euo pipefail
port=${PORT:-9475}
work=$(mktemp -d)
trap 'tmux -L latte-pic kill-server 2>/dev/null || true; kill $service 2>/dev/null || true; rm -rf "$work"' EXIT
cargo build -q --release -p latte-telemetry-cli -p latte-telemetry-prometheus --example watched_service
LATTE_LIVE_ADDR=127.0.0.1:$port LATTE_LIVE_REPORTS=$work/reports.txt \
    target/release/examples/watched_service 120 2>/dev/null &
service=$!
tmux -L latte-pic new-session -d -s pic -x 118 -y 24 "target/release/latte-telemetry top 127.0.0.1:$port"
sleep "${SECONDS_SHOWN:-45}"
tmux -L latte-pic send-keys -t pic Down Down Down
sleep 1.5
tmux -L latte-pic capture-pane -e -p -t pic > "$work/top.ansi"
{
    echo '<meta charset="utf-8"><style>body{margin:0;background:#1e1e1e}'
    echo 'pre{margin:8px;color:#d8d8d8;font:13px/1.2 "DejaVu Sans Mono",monospace}</style><pre>'
    aha --no-header < "$work/top.ansi"
    echo '</pre>'
} > "$work/top.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=980,520 --screenshot="$PWD/docs/img/top.png" "file://$work/top.html" 2>/dev/null
echo "wrote docs/img/top.png"
