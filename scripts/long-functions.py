#!/usr/bin/env python3
"""Lists Rust functions longer than a limit (default 120 lines), outside tests.

Usage: scripts/long-functions.py [LIMIT] [--exclude DIR]...

Scans crates/*/src (a crate's tests/, benches/ and examples/ are tests, as are `#[cfg(test)]`
modules and files under a `tests` folder). A function's length runs from its `fn` line to
its closing brace. Prints `lines path:line name`, longest first, and exits 1 when a
function is over the limit and not in `ACCEPTED` (the functions kept whole on purpose, each
with its reason), so it can guard a check. An accepted function no longer over the limit is
named as stale, to take off the list.
"""

import os
import re
import sys

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
                r"(?:extern\s+\"[^\"]*\"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")

# (path, function) kept over the limit, and why. None today: the per-I/O paths are split into
# `#[inline(always)]` parts, which cost no call.
ACCEPTED = {}


def strip(line, state):
    """The line without strings, chars and comments; `state` carries a block comment or a
    raw string across lines."""
    out = []
    i = 0
    n = len(line)
    while i < n:
        if state["block"]:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out)
            state["block"] = False
            i = end + 2
            continue
        if state["raw"] is not None:
            end = line.find('"' + "#" * state["raw"], i)
            if end < 0:
                return "".join(out)
            i = end + 1 + state["raw"]
            state["raw"] = None
            continue
        if state["str"]:
            if line[i] == "\\":
                i += 2
                continue
            if line[i] == '"':
                state["str"] = False
            i += 1
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"] = True
            i += 2
            continue
        m = re.match(r'b?r(#*)"', line[i:])
        if m and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_")):
            state["raw"] = len(m.group(1))
            i += len(m.group(0))
            continue
        if c == '"':
            state["str"] = True
            i += 1
            continue
        if c == "'":
            m = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|[^\\'])'", line[i:])
            if m:
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(path):
    """(name, first line, lines) of every function in the file outside test modules."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    state = {"block": False, "raw": None, "str": False}
    depth = 0
    stack = []  # (name, start line, depth at its body's brace) of open functions
    pending = None  # a function whose body brace is still ahead
    test_depth = None  # brace depth inside which a #[cfg(test)] module lies
    cfg_test = False
    found = []
    for number, raw in enumerate(lines, 1):
        code = strip(raw, state)
        if test_depth is None and re.match(r"\s*#\[cfg\(test\)\]", code):
            cfg_test = True
        m = FN.match(code)
        if m and test_depth is None and pending is None:
            pending = (m.group(1), number)
        for c in code:
            if c == "{":
                if cfg_test and test_depth is None:
                    test_depth = depth
                    cfg_test = False
                if pending is not None:
                    stack.append((pending[0], pending[1], depth))
                    pending = None
                depth += 1
            elif c == "}":
                depth -= 1
                if stack and stack[-1][2] == depth:
                    name, start, _ = stack.pop()
                    found.append((name, start, number - start + 1))
                if test_depth is not None and depth == test_depth:
                    test_depth = None
            elif c == ";" and pending is not None:
                # A declaration without a body (a trait's required method).
                pending = None
        if cfg_test and code.strip().endswith(";"):
            cfg_test = False
    return found


def main():
    args = sys.argv[1:]
    limit = 120
    excluded = []
    while args:
        a = args.pop(0)
        if a == "--exclude":
            excluded.append(args.pop(0).rstrip("/"))
        else:
            limit = int(a)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    os.chdir(root)
    long = []
    for crate in sorted(os.listdir("crates")):
        src = os.path.join("crates", crate, "src")
        for folder, dirs, files in os.walk(src):
            dirs[:] = sorted(d for d in dirs if d != "tests")
            if any(folder == e or folder.startswith(e + "/") for e in excluded):
                continue
            for name in sorted(files):
                if not name.endswith(".rs") or name == "tests.rs":
                    continue
                path = os.path.join(folder, name)
                for fn, start, count in functions(path):
                    if count > limit:
                        long.append((count, path, start, fn))
    long.sort(key=lambda t: (-t[0], t[1], t[2]))
    unaccepted = 0
    for count, path, start, fn in long:
        why = ACCEPTED.get((path, fn)) if limit == 120 else None
        if why is None:
            unaccepted += 1
            print(f"{count:5} {path}:{start} {fn}")
        else:
            print(f"{count:5} {path}:{start} {fn} (accepted: {why})")
    found = {(path, fn) for _, path, _, fn in long}
    if limit == 120 and not excluded:
        for path, fn in sorted(set(ACCEPTED) - found):
            print(f"stale     {path} {fn}: accepted but not over {limit} lines; take it off ACCEPTED")
    print(f"{len(long)} functions over {limit} lines, {unaccepted} not accepted")
    return 1 if unaccepted else 0


if __name__ == "__main__":
    sys.exit(main())
