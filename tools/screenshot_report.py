"""Screenshot an HTML report with headless Chromium, to look at it as a reader would.

    python tools/screenshot_report.py REPORT.html [OUT.png] [--size 1400,2400] [--only ce-1]

Needs a Chromium (``chromium``, ``chromium-browser`` or ``google-chrome`` on PATH); not part of the test
suite.  Prints the PNG's path.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html")
    ap.add_argument("out", nargs="?", default=None, help="PNG path (default: next to the HTML)")
    ap.add_argument("--only", default="", help="show only the element with this id (e.g. ce-1), to look closely")
    ap.add_argument("--size", default="1400,2400", help="window WIDTH,HEIGHT in pixels (default 1400,2400)")
    args = ap.parse_args(argv)
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        print("no chromium on PATH (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    src = os.path.abspath(args.html)
    out = os.path.abspath(args.out or os.path.splitext(src)[0] + ".png")
    page = src
    if args.only:  # a copy beside the original (relative links keep working) showing one element
        with open(src, encoding="utf-8") as fh:
            text = fh.read()
        style = f"<style>body>*{{display:none!important}} body>#{args.only}{{display:block!important}}</style>"
        fd, page = tempfile.mkstemp(suffix=".html", dir=os.path.dirname(src))
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text.replace("</head>", style + "</head>", 1))
    try:
        _shoot(browser, page, out, args.size)
    finally:
        if page != src:
            os.unlink(page)
    if not os.path.exists(out):
        return 1
    print(out)
    return 0


def _shoot(browser: str, page: str, out: str, size: str) -> None:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", f"--user-data-dir={profile}", f"--screenshot={out}",
               f"--window-size={size}", "file://" + page]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if not os.path.exists(out):
        print(res.stderr[-2000:], file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
