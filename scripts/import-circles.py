#!/usr/bin/env python3
"""Lists import circles between the modules of each crate (exit 1 when there is one).

Usage: scripts/import-circles.py

Each file under crates/*/src is a module (`lib.rs` the crate, `a.rs` or `a/mod.rs` the
module `a`, `a/b.rs` the module `a::b`). A module depends on another when its code outside
its `#[cfg(test)]` module names a path into it: `crate::a::b::Item` (in a `use`, grouped or
not, or inline) or the same through `super::`. A path is resolved to the longest module it
names. Paths between a module and its ancestors are not counted (a parent declares its
children and re-exports their items; a child reads its parent's), so a circle here is one
between modules neither of which contains the other. Prints each circle (a strongly connected
set of modules) and the edges that close it.
"""

import os
import re
import sys

PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{)")


def modules(src):
    """Module path (tuple) of every .rs file under src."""
    out = {}
    for folder, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel[-1] in ("lib", "main", "mod"):
                rel = rel[:-1]
            out[path] = tuple(rel)
    return out


def code_of(path):
    """The file's text without comments, strings and its `#[cfg(test)]` module."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    if m:
        text = text[: m.start()]
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    return text


def expand(text, start):
    """Paths of a `crate::{a, b::{c, d}}` group starting at the `{` at `start`."""
    depth, i = 0, start
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                break
        i += 1
    body = text[start + 1 : i]
    paths, prefix, stack, word = [], [], [], ""
    for c in body + ",":
        if c.isalnum() or c == "_":
            word += c
        elif c == ":":
            if word:
                prefix.append(word)
                word = ""
        elif c == "{":
            stack.append(len(prefix))
        elif c in ",}":
            if word:
                paths.append(prefix + [word])
            word = ""
            if c == "}":
                del prefix[stack.pop():]
            del prefix[(stack[-1] if stack else 0):]
        elif c.isspace():
            continue
        else:
            word = ""
    return paths


def resolve(known, base, parts):
    """The longest module `base` + `parts` names."""
    best = None
    for n in range(len(parts) + 1):
        cand = base + tuple(parts[:n])
        if cand in known:
            best = cand
    return best


def crate_edges(src):
    mods = modules(src)
    known = set(mods.values())
    edges = {}
    for path, me in mods.items():
        text = code_of(path)
        for m in PATH.finditer(text):
            kind, rest = m.group(1), m.group(2)
            base = () if kind == "crate" else me[:-1]
            head = [p for p in rest.split("::") if p and p != "{"]
            if rest == "::{":
                groups = expand(text, m.end() - 1)
            elif text.startswith("::{", m.end()):
                groups = [head + g for g in expand(text, m.end() + 2)]
            else:
                groups = [head]
            for parts in groups:
                if parts and parts[0] == "self":
                    parts = parts[1:]
                up = base
                while parts and parts[0] == "super":
                    up, parts = up[:-1], parts[1:]
                target = resolve(known, up, parts)
                if target is None or target == me:
                    continue
                if target == me[: len(target)] or me == target[: len(me)]:
                    continue
                edges.setdefault(me, set()).add(target)
    return known, edges


def circles(nodes, edges):
    """Strongly connected sets of more than one module (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    found = 0
    total = 0
    for crate in sorted(os.listdir("crates")):
        src = os.path.join("crates", crate, "src")
        if not os.path.isdir(src):
            continue
        nodes, edges = crate_edges(src)
        total += sum(len(t) for t in edges.values())
        for comp in circles(nodes, edges):
            found += 1
            names = ["::".join(c) or "(crate)" for c in comp]
            print(f"{crate}: circle of {', '.join(names)}")
            for a in comp:
                for b in sorted(edges.get(a, ())):
                    if b in comp:
                        print(f"    {'::'.join(a)} -> {'::'.join(b)}")
    print(f"{found} import circles ({total} imports between modules that do not contain each other)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
