"""Regenerate docs/report.png, the README's picture of the report: `make demo`'s run (three
episodes of the built-in demo world, offline) with a `--no-memory` run as its baseline, opened
in headless Chromium (the system's /usr/bin/chromium, over the DevTools protocol, as the
browser tests drive it) and captured at 1400x1250 px.

    .venv/bin/python tools/report_screenshot.py [--output docs/report.png]
"""

from __future__ import annotations

import argparse
import base64
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.cdp import CHROMIUM, Chromium  # noqa: E402

WIDTH, HEIGHT = 1400, 1250


def cairn(*args: str) -> None:
    """Run the cairn command line (offline), failing loudly."""
    subprocess.run([sys.executable, "-m", "cairn", *args], cwd=ROOT, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "report.png")
    parser.add_argument(
        "--map-only", action="store_true", help="capture the map panel alone, at twice the size"
    )
    args = parser.parse_args()
    if not CHROMIUM.is_file():
        sys.exit(f"no {CHROMIUM}: install Debian's chromium (make test does)")
    with tempfile.TemporaryDirectory() as tmp:
        run, baseline = Path(tmp) / "demo", Path(tmp) / "baseline"
        cairn("play", "--workdir", str(run), "--episodes", "3", "--fresh", "-q")
        cairn("play", "--workdir", str(baseline), "--episodes", "3", "--fresh", "--no-memory", "-q")
        cairn("report", "--workdir", str(run), "--baseline", str(baseline), "-q")
        with Chromium(Path(tmp) / "profile", width=WIDTH, height=HEIGHT) as browser:
            page = browser.page()
            try:
                page.send(
                    "Emulation.setDeviceMetricsOverride",
                    width=WIDTH,
                    height=HEIGHT,
                    deviceScaleFactor=1,
                    mobile=False,
                )
                page.send("Emulation.setScrollbarsHidden", hidden=True)
                page.send("Page.enable")
                page.send("Page.navigate", url=(run / "report.html").as_uri())
                page.wait_for("Page.loadEventFired")
                page.drain(0.5)  # let the page's script lay the map out
                clip = {"x": 0, "y": 0, "width": WIDTH, "height": HEIGHT, "scale": 1}
                if args.map_only:
                    box = page.evaluate(
                        "(() => { const b = document.getElementById('map-svg')"
                        ".parentElement.getBoundingClientRect();"
                        " return [b.x, b.y, b.width, b.height]; })()"
                    )
                    clip = dict(zip(("x", "y", "width", "height"), box, strict=True)) | {"scale": 2}
                shot = page.send("Page.captureScreenshot", format="png", clip=clip)
            finally:
                page.close()
    args.output.write_bytes(base64.b64decode(shot["data"]))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
