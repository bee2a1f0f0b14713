#!/usr/bin/env python3
"""Check that every relative link in README.md, ARCHITECTURE.md and docs/*.md resolves.

A link to a file must name an existing path; a link with `#anchor` to a Markdown page must
name a heading of that page (or an `<a id>` on it), slugged as GitHub slugs headings (lower case, punctuation
dropped, spaces to hyphens, a repeated slug numbered -1, -2, ...). Prints each broken link
as `page:line: target` and exits 1 when there is one.

Usage: scripts/check-links.py [PAGE ...]   (pages relative to the repository's root)
"""
import glob
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    seen = {}
    out = set()
    fenced = False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        out.update(re.findall(r'<a id="([^"]+)"', line))
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path):
    fenced = False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            yield number, m.group(1)


def main(pages):
    broken = []
    cache = {}
    for page in pages:
        for number, target in links(page):
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            path = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
            if not os.path.exists(path):
                broken.append(f"{page}:{number}: {target} (no such file)")
                continue
            if anchor and path.endswith(".md"):
                if path not in cache:
                    cache[path] = anchors(path)
                if anchor not in cache[path]:
                    broken.append(f"{page}:{number}: {target} (no such heading)")
    for b in broken:
        print(b)
    return 1 if broken else 0


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    pages = sys.argv[1:] or ["README.md", "ARCHITECTURE.md"] + sorted(glob.glob("docs/*.md"))
    sys.exit(main(pages))
