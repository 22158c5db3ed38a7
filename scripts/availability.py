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
}
# Modules whose declarations carry no Swift availability of their own (C modules).
C_MODULES = {"Glibc", "Musl", "Darwin", "Android", "WinSDK", "os", "CoreFoundation", "_Builtin_float"}


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
        # (kind, usr or type mangling, file, buffer, offset, origin, the @available sets around it)
        self.refs = []
        self.scopes = collections.defaultdict(list)  # (file, buffer) → [(start, end, {domain: version})]
        self.own = set()  # USRs declared in the module itself
        self.own_needs = {}  # own USR → the @available version sets it is declared under
        self.names = {}  # own USR → its name, for the report
        self.imports = set()  # the modules imported

    @staticmethod
    def available(node):
        """{domain: version} of a declaration's own `@available` attributes."""
        return {
            a["domain"]: version(a["introduced"])
            for a in node.get("attrs") or []
            if isinstance(a, dict) and a.get("_kind") == "available_attr" and not a.get("implicit")
            and a.get("domain") in DOMAINS and a.get("introduced")
        }

    def walk(self, node, file, buffer=None, offset=0, origin=0, brace=None, inherited=(), implicit_next=False):
        if isinstance(node, list):
            for i, child in enumerate(node):
                extra = inherited
                if isinstance(child, dict) and child.get("_kind") == "pattern_binding_decl":
                    for after in node[i + 1:]:
                        if not (isinstance(after, dict) and after.get("_kind") == "var_decl"):
                            break
                        extra = extra + tuple(v for v in [self.available(after)] if v)
                self.walk(child, file, buffer, offset, origin, brace, extra, implicit_next)
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
        if kind in ("if_stmt", "guard_stmt", "while_stmt"):
            guarding = None  # the versions an `#available` earlier in the list guarantees
            for condition in node.get("conditions", []):
                if not isinstance(condition, dict):
                    continue
                if condition.get("_kind") != "#available":
                    # `if #available(…), newerAPI()`: the conditions after it run on the newer OS.
                    later = condition.get("range")
                    if guarding and later:
                        self.scopes[(file, later.get("buffer_id"))].append((later["start"], later["end"], guarding))
                    continue
                versions = {
                    q["domain"]: version(q["version"])
                    for q in condition.get("queries", [])
                    if q.get("domain") in DOMAINS and q.get("version")
                }
                if not any(q.get("domain") == "*" for q in condition.get("queries", [])):
                    # `#unavailable`: only the else branch / guard body runs on the newer OS
                    body = node.get("else_stmt" if kind == "if_stmt" else "body", {}).get("range")
                    if body and kind != "while_stmt":
                        self.scopes[(file, body.get("buffer_id"))].append((body["start"], body["end"], versions))
                    continue
                guarding = versions
                if kind in ("if_stmt", "while_stmt"):
                    then = node.get("then_stmt" if kind == "if_stmt" else "body", {}).get("range")
                    if then:
                        self.scopes[(file, then.get("buffer_id"))].append((then["start"], then["end"], versions))
                elif brace and brace.get("buffer_id") == buffer:
                    self.scopes[(file, buffer)].append((span["end"], brace["end"], versions))
        if isinstance(span, dict):
            versions = self.available(node)
            if versions:
                self.scopes[(file, buffer)].append((span["start"], span["end"], versions))
                inherited = inherited + (versions,)
        if kind == "import_decl" and node.get("module_path"):
            self.imports.add(node["module_path"][0])
        if node.get("usr") and kind != "decl_ref":
            self.own.add(node["usr"])
            name = node.get("name")
            if isinstance(name, dict):
                name = name.get("base_name", {}).get("name")
            if isinstance(name, str):
                self.names[node["usr"]] = name
            if inherited:
                self.own_needs[node["usr"]] = inherited
        for key, value in node.items():
            if isinstance(value, str):
                if key == "decl_usr" and value:
                    self.refs.append(("next" if implicit_next else "decl", value, file, buffer, offset, origin, inherited))
                elif key == "protocol" and value.startswith("s:"):
                    self.refs.append(("conformance", value, file, buffer, offset, origin, inherited))
                elif value.startswith("$s") and key != "_kind":
                    self.refs.append(("type", value, file, buffer, offset, origin, inherited))
            elif key == "override" and isinstance(value, list):
                self.refs.extend(("override", usr, file, buffer, offset, origin, inherited) for usr in value)
            if isinstance(value, (dict, list)):
                self.walk(value, file, buffer, offset, origin, brace, inherited,
                          implicit_next or (kind == "for_each_stmt" and key == "next_call"))

    def guarded(self, file, buffer, offset, origin, needs, inherited=()):
        """Whether an enclosing scope names, for every domain in `needs`, a version ≥ that."""
        enclosing = list(inherited) + [v for (start, end, v) in self.scopes.get((file, buffer), []) if start <= offset <= end]
        if buffer is not None:
            enclosing += [v for (start, end, v) in self.scopes.get((file, None), []) if start <= origin <= end]
        return all(any(v.get(domain, (0,)) >= need for v in enclosing) for domain, need in needs.items())


class SymbolGraphs:
    def __init__(self, directory):
        self.symbols, self.parents, self.modules = {}, collections.defaultdict(set), set()
        self.needs = {}  # USR → introduced(usr)
        for path in glob.glob(os.path.join(directory, "*.symbols.json")):
            graph = json.load(open(path))
            module = os.path.basename(path).split(".symbols")[0]
            self.modules.add(module.split("@")[0])
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
                if symbol["module"].split("@")[0] == "_Concurrency":
                    self.types["Swift." + symbol["path"]].add(usr)

    def introduced(self, usr):
        """{domain: version} a symbol needs, its enclosing types' requirements included; worked
        out once a symbol, however often it is used."""
        if usr not in self.needs:
            self.needs[usr] = self.gathered(usr, set())
        return self.needs[usr]

    def gathered(self, usr, seen):
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
            for domain, v in self.gathered(parent, seen).items():
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
        # A module without a symbol graph would go unchecked: say so rather than pass.
        unknown = module.imports - graphs.modules - C_MODULES
        if unknown:
            sys.exit("availability: no symbol graph for %s, imported in %s: add it to scripts/availability.sh"
                     % (", ".join(sorted(unknown)), ast))
        types = graphs.types_in({ref[1] for ref in module.refs if ref[0] == "type"})
        lines = {}
        for kind, value, file, buffer, offset, origin, inherited in module.refs:
            for usr in types.get(value, ()) if kind == "type" else (value,):
                if usr in module.own:
                    needs = {}
                    for v in module.own_needs.get(usr, ()):
                        for d, n in v.items():
                            needs[d] = max(needs.get(d, (0,)), n)
                    symbol = {"path": module.names.get(usr, usr), "module": "this module"}
                elif usr in graphs.symbols:
                    symbol = graphs.symbols[usr]
                    needs = graphs.introduced(usr)
                else:
                    continue
                checked.add(usr)
                needs = {d: v for d, v in needs.items() if d in targets and v > targets[d]}
                if kind == "next" and symbol["path"].endswith("next(isolation:)"):
                    continue  # `for await` calls next(isolation:) only where the OS has it, next() before
                if not needs or symbol["path"] in ALLOWED or module.guarded(file, buffer, offset, origin, needs, inherited):
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
    print("availability: %d symbols checked against %s; every newer one is guarded" % (len(checked), platforms))


if __name__ == "__main__":
    main()
