#!/usr/bin/env bash
# The documentation site as CI checks it: `mkdocs build --strict` (mkdocs.yml;
# a broken link, a missing page or a missing included file fails it), then every
# page of the built site opened in headless Chromium, served from localhost
# (scripts/check_site_chromium.py: pages load, no broken internal links or
# anchors, every image rendered, nothing fetched from outside). Leaves the site
# and screenshots of the start page and the benchmark charts page in OUT_DIR.
# Needs mkdocs and the rest of .ci/requirements.txt on the PATH's python, and
# chromium (Debian package chromium).
#
# Usage: bash scripts/check-docs-site.sh [OUT_DIR]   (default build-docs)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-docs}
export NO_MKDOCS_2_WARNING=1
python -m mkdocs build --strict --site-dir "$out/site"
python scripts/check_site_chromium.py "$out/site" \
  --screenshot "index.html=$out/screenshot-start.png" \
  --screenshot "benchmarks/results/index.html=$out/screenshot-benchmarks.png"
