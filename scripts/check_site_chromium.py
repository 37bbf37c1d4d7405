#!/usr/bin/env python3
"""Checks a built documentation site in headless Chromium.

Serves the site directory on localhost (http.server), opens every page in
headless Chromium, driven through the DevTools protocol (websockets, pinned in
.ci/requirements.txt), and fails when

  * a page does not load (no HTTP 200, or a JavaScript exception);
  * any request fails, returns an HTTP error, or leaves localhost (the site
    must work offline: no web fonts, no CDN);
  * an internal link points at a page that does not exist, or at an anchor
    that page lacks (external links are listed, not followed);
  * an image (<img>, <object>) is missing or did not render (an <img> that
    loaded has a natural width).

It saves screenshots of the pages named by --screenshot PAGE=FILE and prints
"checked N pages ..." (the count .ci/run reads).

Usage: check_site_chromium.py SITE_DIR [--screenshot index.html=start.png ...]
                              [--chromium PATH] [--timeout 30]
"""
import argparse
import asyncio
import base64
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse

import websockets

# Collected after the load event (and after images settle): every link with
# its resolved URL, every id, every image with whether it rendered.
PAGE_SCRIPT = r"""
(async () => {
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map(i => i.complete ? null :
      new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); })));
  return JSON.stringify({
    title: document.title,
    links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
    ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id)
           .concat(Array.from(document.querySelectorAll('a[name]')).map(e => e.name)),
    images: imgs.map(i => ({src: i.currentSrc || i.src, complete: i.complete,
                            width: i.naturalWidth, height: i.naturalHeight})),
    objects: Array.from(document.querySelectorAll('object[data]')).map(o => o.data),
  });
})()
"""


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(site):
    handler = functools.partial(Quiet, directory=site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def site_pages(site):
    """Every HTML page of the site as a URL path ("/", "/guide/"), 404.html aside."""
    pages = []
    for root, _, files in os.walk(site):
        for f in files:
            if not f.endswith(".html") or f == "404.html":
                continue
            rel = os.path.relpath(os.path.join(root, f), site).replace(os.sep, "/")
            pages.append("/" + (rel[:-len("index.html")] if rel.endswith("index.html") else rel))
    return sorted(pages)


def page_key(path):
    """The page a URL path names ("/a/" and "/a/index.html" are one)."""
    return path[:-len("index.html")] if path.endswith("/index.html") else path


def file_for(site, path):
    p = urllib.parse.unquote(path).lstrip("/")
    full = os.path.join(site, p)
    return os.path.join(full, "index.html") if path.endswith("/") or os.path.isdir(full) else full


class Browser:
    """One page of headless Chromium through the DevTools protocol."""

    def __init__(self, ws):
        self.ws, self.next_id, self.pending, self.events = ws, 0, {}, asyncio.Queue()
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self):
        async for raw in self.ws:
            msg = json.loads(raw)
            if "id" in msg and msg["id"] in self.pending:
                self.pending.pop(msg["id"]).set_result(msg)
            elif "method" in msg:
                await self.events.put(msg)

    async def call(self, method, session=None, **params):
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = fut
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        await self.ws.send(json.dumps(msg))
        reply = await fut
        if "error" in reply:
            raise RuntimeError("%s: %s" % (method, reply["error"]))
        return reply.get("result", {})


def start_chromium(exe, profile):
    args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--no-default-browser-check", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--hide-scrollbars",
            "--remote-debugging-port=0", "--user-data-dir=" + profile, "about:blank"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        m = re.search(r"DevTools listening on (ws://\S+)", line)
        if m:
            # Keep draining stderr so that Chromium never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, m.group(1)
    raise SystemExit("chromium did not start:\n" + "".join(seen[-20:]))


async def check(site, base, pages, screenshots, exe, timeout):
    problems, found, external = [], {}, set()
    profile = tempfile.mkdtemp(prefix="cudnnfe-chromium-")
    proc, ws_url = start_chromium(exe, profile)
    try:
        async with websockets.connect(ws_url, max_size=None) as ws:
            b = Browser(ws)
            target = (await b.call("Target.createTarget", url="about:blank"))["targetId"]
            session = (await b.call("Target.attachToTarget", targetId=target,
                                    flatten=True))["sessionId"]
            for domain in ("Page", "Runtime", "Network"):
                await b.call(domain + ".enable", session)
            await b.call("Emulation.setDeviceMetricsOverride", session, width=1280, height=1000,
                         deviceScaleFactor=1, mobile=False)
            for path in pages:
                url = base + path
                while not b.events.empty():
                    b.events.get_nowait()
                await b.call("Page.navigate", session, url=url)
                requests, status = {}, None
                loop = asyncio.get_running_loop()
                deadline = loop.time() + timeout
                while True:
                    try:
                        ev = await asyncio.wait_for(b.events.get(), deadline - loop.time())
                    except asyncio.TimeoutError:
                        problems.append("%s: did not load within %ds" % (path, timeout))
                        break
                    m, p = ev["method"], ev.get("params", {})
                    if m == "Network.requestWillBeSent":
                        requests[p["requestId"]] = p["request"]["url"]
                        if not p["request"]["url"].startswith((base, "data:", "blob:")):
                            problems.append("%s: requests %s (the site must work offline)"
                                            % (path, p["request"]["url"]))
                    elif m == "Network.responseReceived":
                        code = p["response"]["status"]
                        if p["response"]["url"] == url:
                            status = code
                        if code >= 400:
                            problems.append("%s: %s returned HTTP %d" % (path, p["response"]["url"],
                                                                        code))
                    elif m == "Network.loadingFailed" and not p.get("canceled"):
                        problems.append("%s: %s failed: %s" % (
                            path, requests.get(p["requestId"], "?"), p.get("errorText")))
                    elif m == "Runtime.exceptionThrown":
                        d = p["exceptionDetails"]
                        problems.append("%s: JavaScript exception: %s" % (
                            path, d.get("exception", {}).get("description", d.get("text"))))
                    elif m == "Page.loadEventFired":
                        break
                if status != 200:
                    problems.append("%s: HTTP status %s" % (path, status))
                r = await b.call("Runtime.evaluate", session, expression=PAGE_SCRIPT,
                                 awaitPromise=True, returnByValue=True)
                info = json.loads(r["result"]["value"])
                found[page_key(path)] = info
                if not info["title"]:
                    problems.append("%s: no title" % path)
                for img in info["images"]:
                    if not img["complete"] or img["width"] == 0:
                        problems.append("%s: image %s did not render" % (path, img["src"]))
                for obj in info["objects"]:
                    if not os.path.isfile(file_for(site, urllib.parse.urlsplit(obj).path)):
                        problems.append("%s: object %s is missing" % (path, obj))
                if path in screenshots:
                    shot = await b.call("Page.captureScreenshot", session, format="png")
                    with open(screenshots[path], "wb") as f:
                        f.write(base64.b64decode(shot["data"]))
                    print("screenshot of %s: %s" % (path, screenshots[path]))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)

    links = images = 0
    for path, info in found.items():
        images += len(info["images"]) + len(info["objects"])
        for href in info["links"]:
            u = urllib.parse.urlsplit(href)
            if u.scheme in ("mailto", "javascript"):
                continue
            if not href.startswith(base):
                external.add(href)
                continue
            links += 1
            if not os.path.isfile(file_for(site, u.path)):
                problems.append("%s: broken link %s" % (path, href[len(base):]))
                continue
            frag = urllib.parse.unquote(u.fragment)
            if frag and u.path.endswith((".html", "/")):
                target = found.get(page_key(u.path))
                if target is not None and frag not in target["ids"]:
                    problems.append("%s: link %s: no anchor #%s there" % (
                        path, href[len(base):], frag))
    return problems, links, images, sorted(external)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("site")
    ap.add_argument("--screenshot", action="append", default=[], metavar="PAGE=FILE",
                    help="save a PNG of PAGE (a path in the site, e.g. index.html)")
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM", ""))
    ap.add_argument("--timeout", type=int, default=30)
    args = ap.parse_args(argv)
    site = os.path.abspath(args.site)
    exe = args.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("check_site_chromium.py: no chromium (Debian package chromium)", file=sys.stderr)
        return 2
    server = serve(site)
    base = "http://127.0.0.1:%d" % server.server_address[1]
    pages = site_pages(site)
    screenshots = {}
    for spec in args.screenshot:
        page, _, out = spec.partition("=")
        path = "/" + (page[:-len("index.html")] if page.endswith("index.html") else page)
        if path not in pages:
            print("check_site_chromium.py: no page %s in %s" % (page, site), file=sys.stderr)
            return 2
        screenshots[path] = os.path.abspath(out)
    try:
        problems, links, images, external = asyncio.run(
            check(site, base, pages, screenshots, exe, args.timeout))
    finally:
        server.shutdown()
    for p in problems:
        print("FAIL " + p)
    if external:
        print("external links (not followed): %d, e.g. %s" % (len(external), external[0]))
    print("checked %d pages in Chromium: %d internal links, %d images; %d problems"
          % (len(pages), links, images, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
