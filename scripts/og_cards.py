"""Draws the Open Graph cards (static/img/og-card-<lang>.png, 1200 × 630, what link previews show) with Debian's
Chromium. Run by hand after changing their text or the site's colours; the PNGs are committed.

    .venv/bin/python scripts/og_cards.py
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

OUT = Path(__file__).resolve().parent.parent / "static" / "img"
CARDS = {
    "en": ("Can this hardware run this LLM?", "Memory · KV cache · speed · cost per 1M tokens · launch commands",
           "From each model's config.json, checked against real file sizes and measured speeds"),
    "de": ("Läuft dieses LLM auf dieser Hardware?",
           "Speicher · KV-Cache · Tempo · Kosten pro 1 Mio. Tokens · Startbefehle",
           "Aus der config.json jedes Modells, geprüft an echten Dateigrößen und gemessenen Geschwindigkeiten"),
}
# The site's colours (static/css/site.css: --accent, --info, --warn, --line, --ink, --muted); the bar is a memory
# breakdown (weights, KV cache, runtime, headroom).
HTML = """<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;width:1200px;height:630px;font-family:"DejaVu Sans",sans-serif;background:#fff;color:#1b1f24;display:flex}
.bar{width:28px;background:#0b5cad}
.main{flex:1;padding:72px 80px;display:flex;flex-direction:column;justify-content:space-between}
.brand{font-size:40px;font-weight:700;color:#0b5cad;letter-spacing:.5px}
h1{font-size:64px;line-height:1.12;margin:0 0 28px}
.sub{font-size:32px;color:#4d5661;line-height:1.35}
.foot{font-size:24px;color:#4d5661;border-top:3px solid #d5dae0;padding-top:22px}
.mem{display:flex;gap:10px;margin-top:34px}.mem span{height:26px;border-radius:6px}
</style></head><body><div class="bar"></div><div class="main"><div class="brand">LLM Sizer</div>
<div><h1>%s</h1><div class="sub">%s</div>
<div class="mem"><span style="width:520px;background:#0b5cad"></span><span style="width:150px;background:#3d3f9e"></span>
<span style="width:70px;background:#8a5300"></span><span style="width:180px;background:#d5dae0"></span></div></div>
<div class="foot">%s</div></div></body></html>"""
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]


def main() -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 630})
        for language, (title, subtitle, footer) in CARDS.items():
            page.set_content(HTML % (title, subtitle, footer))
            page.screenshot(path=OUT / f"og-card-{language}.png")
        browser.close()


if __name__ == "__main__":
    main()
