#!/usr/bin/env bash
# Re-creates src/studykb/web/static/vendor/ (and the test-only static/dev/vendor/) from
# pinned npm versions, so the web pages work offline with nothing from a CDN.
#
#   scripts/vendor-web.sh            # fetch the pinned tarballs with `npm pack`, copy dist files
#   scripts/vendor-web.sh --check    # the same into a temp dir, then diff against the repo
#   scripts/vendor-web.sh --pygments # only re-write static/pygments.css from Pygments' styles
#
# Each tarball's integrity (sha512, as the registry lists it) is checked against the pin
# below before anything is copied. Only the browser builds are kept, with each package's
# licence as vendor/LICENSES/<package>.txt. To upgrade: change a version, run
# `npm view PKG@VERSION dist.integrity`, paste the hash, run this script, test, commit.
#
# Needs: bash, npm (only for `npm pack`; no install scripts run), tar, sed.
set -euo pipefail

# name version integrity
PINS=(
  "sigma 3.0.3 sha512-5H0zFlx6/NTQpqBg4Rm569ZOpnBOXMaS25UQThIWMU3XyzI5AhmorK/gnl87BvJBLhQd0tW4C0LIp3enWzMoNw=="
  "graphology 0.26.0 sha512-8SSImzgUUYC89Z042s+0r/vMibY7GX/Emz4LDO5e7jYXhuoWfHISPFJYjpRLUSJGq6UQ6xlenvX1p/hJdfXuXg=="
  "graphology-layout-forceatlas2 0.10.1 sha512-ogzBeF1FvWzjkikrIFwxhlZXvD2+wlY54lqhsrWprcdPjopM2J9HoMweUmIgwaTvY4bUYVimpSsOdvDv1gPRFQ=="
  "katex 0.19.1 sha512-jG8uKntjSEcm2EpQOh0XturpPuuC9r3Sq5HLHdsFdWZT27E672SF19QEi+of0/YeOy15lDgRhKvr5614uRrEfA=="
  "axe-core 4.14.1 sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
  # bundled inside sigma.min.js and graphology.umd.min.js: only their licences are copied
  "events 3.3.0 sha512-mQw+2fkQbALzQ7V0MY0IqdnXNOeTtP4r0lN9z7AAawCXgqea7bDii20AYrIBrFd/Hx0M2Ocz6S111CaFkUcb0Q=="
  "graphology-utils 2.5.2 sha512-ckHg8MXrXJkOARk56ZaSCM1g1Wihe2d6iTmz1enGOz4W/l831MBCKSayeFQfowgF8wd+PQ4rlch/56Vs/VZLDQ=="
)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
static="$here/src/studykb/web/static"
check=0
[[ "${1:-}" == "--check" ]] && check=1

if [[ "${1:-}" == "--pygments" ]]; then
  # code highlighting: Pygments' "default" style, and "github-dark" for dark mode; token
  # colours only (studykb.css gives the block its background). Light-only rules are reset
  # in dark mode so that no light colour is left on the dark background.
  python3 - "$static/pygments.css" <<'PY'
import re, sys
from pygments.formatters import HtmlFormatter

def rules(style):
    out = {}
    for line in HtmlFormatter(style=style).get_style_defs(".highlight").splitlines():
        m = re.match(r"^(\.highlight \.[\w-]+) \{ (.*?) \}", line)
        if m:
            out[m.group(1)] = line
    return out

light, dark = rules("default"), rules("github-dark")
lines = ["/* Code highlighting for the server's Pygments output (class \"highlight\"): the",
         "   \"default\" style in light mode, \"github-dark\" in dark mode. Written by",
         "   scripts/vendor-web.sh --pygments; the background comes from studykb.css. */",
         ".highlight { background: var(--code-bg); }"]
lines += list(light.values())
lines.append("@media (prefers-color-scheme: dark) {")
for sel in light:
    if sel not in dark:
        lines.append(f"  {sel} {{ color: inherit; background-color: transparent; border: 0 }}")
lines += ["  " + rule for rule in dark.values()]
lines.append("}")
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
dest="$work/out"              # built here first, moved into place at the end
mkdir -p "$dest/vendor/LICENSES" "$dest/dev/vendor/LICENSES" "$work/pkg"

fetch() {  # fetch NAME VERSION INTEGRITY -> unpacks into $work/pkg/NAME
  local name="$1" version="$2" want="$3" got tgz
  got="$(cd "$work" && npm pack --silent --json "$name@$version" \
         | sed -n 's/.*"integrity": *"\([^"]*\)".*/\1/p' | head -n1)"
  if [[ "$got" != "$want" ]]; then
    echo "vendor-web: $name@$version integrity mismatch: got '$got', pinned '$want'" >&2
    exit 1
  fi
  tgz="$(ls "$work"/"$name"-"$version".tgz)"
  mkdir -p "$work/pkg/$name"
  tar -xzf "$tgz" -C "$work/pkg/$name" --strip-components=1
}

licence() {  # licence NAME DESTDIR: the package's LICENSE* file as DESTDIR/NAME.txt
  local name="$1" dir="$2" file
  file="$(ls "$work/pkg/$name" | grep -iE '^licen[cs]e' | head -n1)"
  [[ -n "$file" ]] || { echo "vendor-web: no licence file in $name" >&2; exit 1; }
  cp "$work/pkg/$name/$file" "$dir/$name.txt"
}

for pin in "${PINS[@]}"; do
  # shellcheck disable=SC2086
  fetch $pin
done

v="$dest/vendor"
# sigma.js: the UMD build (global `Sigma`); graphology-utils and events are bundled in it.
mkdir -p "$v/sigma" && cp "$work/pkg/sigma/dist/sigma.min.js" "$v/sigma/"
# graphology: the UMD build (global `graphology`), without its source-map comment.
mkdir -p "$v/graphology"
sed '/^\/\/# sourceMappingURL=/d' "$work/pkg/graphology/dist/graphology.umd.min.js" \
  > "$v/graphology/graphology.umd.min.js"
# ForceAtlas2: the package is CommonJS and its own worker is a blob: URL (refused by a
# Content-Security-Policy without `worker-src blob:`). Its iteration function needs no
# other module, so it is wrapped, unchanged, for importScripts() in our own worker file
# (static/graph-layout-worker.js): it becomes `self.forceAtlas2Iterate`.
mkdir -p "$v/graphology-layout-forceatlas2"
{
  echo "/* graphology-layout-forceatlas2 $(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' \
        "$work/pkg/graphology-layout-forceatlas2/package.json" | head -n1) iterate.js (MIT),"
  echo "   wrapped for importScripts() by scripts/vendor-web.sh: self.forceAtlas2Iterate */"
  echo "(function (root) {"
  echo "var module = {exports: {}}, exports = module.exports;"
  cat "$work/pkg/graphology-layout-forceatlas2/iterate.js"
  echo "root.forceAtlas2Iterate = module.exports;"
  echo "})(typeof self !== 'undefined' ? self : this);"
} > "$v/graphology-layout-forceatlas2/fa2-iterate.js"
# KaTeX: the minified script and style sheet, WOFF2 fonts only (every browser that runs
# sigma's WebGL reads WOFF2), so the style sheet's font lists keep only the WOFF2 source.
mkdir -p "$v/katex/fonts"
cp "$work/pkg/katex/dist/katex.min.js" "$v/katex/"
cp "$work/pkg/katex/dist/fonts/"*.woff2 "$v/katex/fonts/"
sed -E 's/,url\(fonts\/[A-Za-z0-9_-]+\.woff\) format\("woff"\)//g;
        s/,url\(fonts\/[A-Za-z0-9_-]+\.ttf\) format\("truetype"\)//g' \
  "$work/pkg/katex/dist/katex.min.css" > "$v/katex/katex.min.css"
if grep -qE '\.(woff|ttf)\)' "$v/katex/katex.min.css"; then
  echo "vendor-web: katex.min.css still names WOFF/TTF fonts; update the sed above" >&2
  exit 1
fi
for name in sigma graphology graphology-layout-forceatlas2 katex events graphology-utils; do
  licence "$name" "$v/LICENSES"
done
# axe-core: for the accessibility checks under static/dev/ only; no page loads it.
cp "$work/pkg/axe-core/axe.min.js" "$dest/dev/vendor/"
licence axe-core "$dest/dev/vendor/LICENSES"

{
  echo "# Written by scripts/vendor-web.sh; name version integrity"
  for pin in "${PINS[@]}"; do echo "$pin"; done
} > "$v/VERSIONS.txt"

if (( check )); then
  diff -r "$dest/vendor" "$static/vendor" && diff -r "$dest/dev/vendor" "$static/dev/vendor" \
    && echo "vendor-web: static/vendor is up to date"
  exit $?
fi
rm -rf "$static/vendor" "$static/dev/vendor"
mkdir -p "$static/dev"
mv "$dest/vendor" "$static/vendor"
mv "$dest/dev/vendor" "$static/dev/vendor"
du -sh "$static/vendor" "$static/dev/vendor"
