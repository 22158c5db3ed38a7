#!/usr/bin/env python3
"""Finds API used before the package's Apple deployment targets have it.

The library is built only on Linux here, where the compiler checks no Apple availability: a call
to an API that needs macOS 13 compiles, and breaks the build of every user on a Mac. This script
joins what the code refers to (`swiftc -dump-ast -dump-ast-format json`: every declaration's USR,
every type) with what the toolchain's modules declare (`swift-symbolgraph-extract`: each symbol's
`@available`, a member's including its type's), and reports each use of an API introduced after
the deployment targets in Package.swift that is not inside an `if #available`, `guard #available`
or `@available` scope naming a version at least as new.

Usage: availability.py PACKAGE_SWIFT SYMBOL_GRAPH_DIR AST_JSON...
Exits 1 if a use is found, printing each with its file and line.
"""
import bisect
import collections
import glob
import json
import os
import re
import subprocess
import sys

DOMAINS = ("macOS", "iOS", "tvOS", "watchOS", "visionOS")

# Symbols whose symbol-graph availability does not hold at a use site on Apple platforms.
ALLOWED = {
    # The generic operator is marked macOS 15 in the standard library built for Linux; concrete
    # integer types have had `&*` since Swift 4, and Apple builds resolve to those.
    "FixedWidthInteger.&*(_:_:)": "integer types' own operator",
    # `for await` and task groups call `next(isolation:)` only where it exists (macOS 15, …),
    # and plain `next()` before that.
    "AsyncStream.Iterator.next(isolation:)": "for-await falls back to next()",
    "TaskGroup.Iterator.next(isolation:)": "for-await falls back to next()",
    "ThrowingTaskGroup.Iterator.next(isolation:)": "for-await falls back to next()",
}


def shown(v):
    """(10, 15, 0) → "10.15"; (13, 4, 1) → "13.4.1"."""
    return "%d.%d" % v[:2] + (".%d" % v[2] if v[2] else "")


def version(text):
    parts = [int(p) for p in re.findall(r"\d+", text)][:3]
    return tuple(parts + [0] * (3 - len(parts)))


def deployment_targets(package_swift):
    """The platforms line of Package.swift: `.macOS(.v10_15)` → {"macOS": (10, 15, 0)}."""
    text = open(package_swift).read()
    targets = {}
    for domain, major, minor in re.findall(r"\.(macOS|iOS|tvOS|watchOS|visionOS)\(\.v(\d+)(?:_(\d+))?\)", text):
        targets[domain] = (int(major), int(minor or 0), 0)
    if not targets:
        sys.exit("availability: no platforms found in " + package_swift)
    return targets


def load_ast(path):
    """The source files of one module's AST dump (compiler diagnostics may be interleaved)."""
    text, decoder, files, i = open(path).read(), json.JSONDecoder(), [], 0
    while True:
        i = text.find('{"_kind":"source_file"', i)
        if i < 0:
            return files
        node, i = decoder.raw_decode(text, i)
        files.append(node)


class Module:
    """References and availability scopes gathered from one module's AST.

    Code a macro expands (`#expect`, `@Test`'s thunks) has its ranges in a buffer of its own: a
    position is (buffer, offset), with `None` for the source file, and such code is also within
    the scopes around the macro's own place in the file (`origin`).
    """

    def __init__(self):
        self.refs = []  # (kind, usr or type mangling, file, buffer, offset, origin)
        self.scopes = collections.defaultdict(list)  # (file, buffer) → [(start, end, {domain: version})]
        self.own = set()  # USRs declared in the module itself

    def walk(self, node, file, buffer=None, offset=0, origin=0, brace=None):
        if isinstance(node, list):
            for child in node:
                self.walk(child, file, buffer, offset, origin, brace)
            return
        if not isinstance(node, dict):
            return
        span = node.get("range")
        if isinstance(span, dict) and "start" in span:
            buffer, offset = span.get("buffer_id"), span["start"]
            if buffer is None:
                origin = offset
        kind = node.get("_kind")
        if kind == "brace_stmt" and isinstance(span, dict):
            brace = span
        if kind in ("if_stmt", "guard_stmt"):
            for condition in node.get("conditions", []):
                if isinstance(condition, dict) and condition.get("_kind") == "#available":
                    versions = {
                        q["domain"]: version(q["version"])
                        for q in condition.get("queries", [])
                        if q.get("domain") in DOMAINS and q.get("version")
                    }
                    if kind == "if_stmt" and node.get("then_stmt", {}).get("range"):
                        then = node["then_stmt"]["range"]
                        self.scopes[(file, then.get("buffer_id"))].append((then["start"], then["end"], versions))
                    elif kind == "guard_stmt" and brace and brace.get("buffer_id") == buffer:
                        self.scopes[(file, buffer)].append((span["end"], brace["end"], versions))
        attributes = node.get("attrs")
        if isinstance(attributes, list) and isinstance(span, dict):
            versions = {
                a["domain"]: version(a["introduced"])
                for a in attributes
                if isinstance(a, dict) and a.get("_kind") == "available_attr" and not a.get("implicit")
                and a.get("domain") in DOMAINS and a.get("introduced")
            }
            if versions:
                self.scopes[(file, buffer)].append((span["start"], span["end"], versions))
        if node.get("usr") and kind != "decl_ref":
            self.own.add(node["usr"])
        for key, value in node.items():
            if isinstance(value, str):
                if key == "decl_usr" and value:
                    self.refs.append(("decl", value, file, buffer, offset, origin))
                elif key == "protocol" and value.startswith("s:"):
                    self.refs.append(("conformance", value, file, buffer, offset, origin))
                elif value.startswith("$s") and key != "_kind":
                    self.refs.append(("type", value, file, buffer, offset, origin))
            elif key == "override" and isinstance(value, list):
                self.refs.extend(("override", usr, file, buffer, offset, origin) for usr in value)
            if isinstance(value, (dict, list)):
                self.walk(value, file, buffer, offset, origin, brace)

    def guarded(self, file, buffer, offset, origin, needs):
        """Whether an enclosing scope names, for every domain in `needs`, a version ≥ that."""
        enclosing = [v for (start, end, v) in self.scopes.get((file, buffer), []) if start <= offset <= end]
        if buffer is not None:
            enclosing += [v for (start, end, v) in self.scopes.get((file, None), []) if start <= origin <= end]
        return all(any(v.get(domain, (0,)) >= need for v in enclosing) for domain, need in needs.items())


class SymbolGraphs:
    def __init__(self, directory):
        self.symbols, self.parents = {}, collections.defaultdict(set)
        for path in glob.glob(os.path.join(directory, "*.symbols.json")):
            graph = json.load(open(path))
            module = os.path.basename(path).split(".symbols")[0]
            for symbol in graph["symbols"]:
                usr = symbol["identifier"]["precise"]
                known = self.symbols.get(usr)
                if known is None or (not known["availability"] and symbol.get("availability")):
                    self.symbols[usr] = {
                        "module": module,
                        "path": ".".join(symbol["pathComponents"]),
                        "kind": symbol["kind"]["identifier"],
                        "availability": symbol.get("availability", []),
                    }
            for relation in graph.get("relationships", []):
                if relation["kind"] in ("memberOf", "requirementOf", "optionalRequirementOf"):
                    self.parents[relation["source"]].add(relation["target"])
        self.types = collections.defaultdict(set)  # "Module.Type.Nested" → USRs
        for usr, symbol in self.symbols.items():
            if symbol["kind"] in ("swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias"):
                self.types[symbol["module"].split("@")[0] + "." + symbol["path"]].add(usr)

    def introduced(self, usr, seen=None):
        """{domain: version} a symbol needs, its enclosing types' requirements included."""
        seen = seen or set()
        if usr in seen or usr not in self.symbols:
            return {}
        seen.add(usr)
        needs = {}
        for entry in self.symbols[usr]["availability"]:
            domain = entry.get("domain")
            if domain in DOMAINS and "introduced" in entry:
                v = entry["introduced"]
                needs[domain] = max(needs.get(domain, (0,)), (v.get("major", 0), v.get("minor", 0), v.get("patch", 0)))
        for parent in self.parents.get(usr, ()):
            for domain, v in self.introduced(parent, seen).items():
                needs[domain] = max(needs.get(domain, (0,)), v)
        return needs

    def types_in(self, manglings):
        """The type USRs each mangled type names, found by demangling it."""
        manglings = sorted(manglings)
        demangled = subprocess.run(
            ["swift-demangle", "-compact"], input="\n".join(manglings) + "\n", capture_output=True, text=True, check=True
        ).stdout.split("\n")
        dotted = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
        result = {}
        for mangling, text in zip(manglings, demangled):
            usrs = set()
            for name in dotted.findall(text):
                parts = name.split(".")
                for n in range(len(parts), 1, -1):  # the longest prefix that names a type
                    if ".".join(parts[:n]) in self.types:
                        usrs |= self.types[".".join(parts[:n])]
                        break
            result[mangling] = usrs
        return result


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    targets = deployment_targets(sys.argv[1])
    graphs = SymbolGraphs(sys.argv[2])
    root = os.path.dirname(os.path.abspath(sys.argv[1]))
    findings, checked = [], set()
    for ast in sys.argv[3:]:
        module, files = Module(), load_ast(ast)
        if not files:
            sys.exit("availability: no AST in %s:\n%s" % (ast, open(ast).read()[:2000]))
        for file in files:
            module.walk(file.get("items", []), file["filename"])
        types = graphs.types_in({ref[1] for ref in module.refs if ref[0] == "type"})
        lines = {}
        for kind, value, file, buffer, offset, origin in module.refs:
            for usr in types.get(value, ()) if kind == "type" else (value,):
                if usr in module.own or usr not in graphs.symbols:
                    continue
                checked.add(usr)
                symbol = graphs.symbols[usr]
                needs = {d: v for d, v in graphs.introduced(usr).items() if d in targets and v > targets[d]}
                if not needs or symbol["path"] in ALLOWED or module.guarded(file, buffer, offset, origin, needs):
                    continue
                path = file if os.path.isabs(file) else os.path.join(root, file)
                if path not in lines:
                    lines[path] = [0] + [m.end() for m in re.finditer(b"\n", open(path, "rb").read())]
                line = bisect.bisect_right(lines[path], origin)
                needed = ", ".join("%s %s" % (d, shown(v)) for d, v in sorted(needs.items()))
                expanded = " (in a macro's expansion)" if buffer is not None else ""
                findings.append((os.path.relpath(path, root), line, "%s (%s) needs %s%s" % (
                    symbol["path"], symbol["module"].split("@")[0], needed, expanded)))
    for path, line, what in sorted(set(findings)):
        print("%s:%d: %s" % (path, line, what))
    platforms = ", ".join("%s %s" % (d, shown(v)) for d, v in sorted(targets.items()))
    if findings:
        print("availability: %d uses of API newer than the deployment targets (%s), outside an "
              "`if #available` or `@available` scope" % (len(set(findings)), platforms))
        sys.exit(1)
    print("availability: %d outside symbols checked against %s; every newer one is guarded" % (len(checked), platforms))


if __name__ == "__main__":
    main()
