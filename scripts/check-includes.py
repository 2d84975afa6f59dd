#!/usr/bin/env python3
"""check-includes.py [--root DIR] [--rules FILE] [--check-doc DOC | --update-doc DOC | --render]

Holds every tracked (or new) .h .cc .c .S file to scripts/include-rules.txt: each "..." include must exist
and be one its folder may include; every allowance must be used by an include, and the folders'
allowances must form a strict order (no folder reaches, through any chain, back to itself).
--check-doc also fails when DOC's layout blocks (the table between <!-- layout:table --> and
<!-- /layout:table -->, the order between <!-- layout:order --> and <!-- /layout:order -->) are not
the ones the rules render; --update-doc rewrites them; --render prints them. DOC and FILE are relative to DIR (default: this
repository). Exit: 0 clean, 1 a breach (one line each), 2 bad usage or rules.
"""
import argparse
import os
import re
import subprocess
import sys

SOURCES = (".h", ".cc", ".c", ".S")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
BLOCKS = ("table", "order")  # doc/layout.md's generated blocks, each between its two markers


class RulesError(Exception):
    pass


class Rules:
    def __init__(self, path, name):
        self.name = name  # as messages print it
        self.folders = {}  # folder -> {"runs", "includes", "line"}, in file order
        self.generated = set()
        self.exceptions = []  # (file, header, why, line)
        self.current = None
        with open(path, encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                self._parse(number, text)

    def _parse(self, number, text):
        words = text.split()
        if not words or words[0].startswith("#"):
            return
        where = f"{self.name}:{number}"
        key, args = words[0], words[1:]
        if key == "folder":
            if len(args) != 1 or not args[0].endswith("/"):
                raise RulesError(f"{where}: folder takes one path ending in /")
            if args[0] in self.folders:
                raise RulesError(f"{where}: {args[0]} has a folder line already")
            self.current = args[0]
            self.folders[args[0]] = {"runs": None, "includes": [], "line": number}
        elif key in ("runs", "includes"):
            if self.current is None:
                raise RulesError(f"{where}: {key} before any folder line")
            rule = self.folders[self.current]
            if key == "runs":
                rule["runs"] = text.strip()[len("runs"):].strip()
            else:
                rule["includes"] += [(arg, number) for arg in args]
        elif key == "generated" and len(args) == 1:
            self.generated.add(args[0])
        elif key == "exception" and len(args) >= 3:
            self.exceptions.append((args[0], args[1], " ".join(args[2:]), number))
        else:
            raise RulesError(f"{where}: cannot read: {text.strip()}")

    def folder_of(self, path):
        """The longest folder line over path, or None."""
        owners = [folder for folder in self.folders if path.startswith(folder)]
        return max(owners, key=len) if owners else None

    def allowance(self, folder, header):
        """The allowance (target, line) of folder's rule that lets it include header; None when none
        does. Its own files need none: ("", 0)."""
        if header.startswith(folder):
            return ("", 0)
        for target, number in self.folders[folder]["includes"]:
            if target == "*" or header == target or (target.endswith("/") and header.startswith(target)):
                return (target, number)
        return None

    def dependencies(self, folder):
        """The folders folder's allowances reach (a header target counts as its folder), in rule order;
        * reaches every folder that has no * of its own."""
        def star(f):
            return any(t == "*" for t, _ in self.folders[f]["includes"])

        if star(folder):
            return [f for f in self.folders if not star(f)]
        out = []
        for target, _ in self.folders[folder]["includes"]:
            owner = self.folder_of(target)
            if owner and owner != folder and owner not in out:
                out.append(owner)
        return out

    def cycle(self):
        """One chain of folders that leads back to its first, or None: the allowances' order is strict."""
        state = {}  # folder -> "open" while on the path, "done" after

        def visit(folder, path):
            state[folder] = "open"
            for dep in self.dependencies(folder):
                if state.get(dep) == "open":
                    return path[path.index(dep):] + [folder, dep] if dep in path else path + [folder, dep]
                if dep not in state:
                    found = visit(dep, path + [folder])
                    if found:
                        return found
            state[folder] = "done"
            return None

        for folder in self.folders:
            if folder not in state:
                found = visit(folder, [])
                if found:
                    return found
        return None

    def layers(self):
        """Each folder's depth in the order: 0 for one that includes no other folder, else one more than
        the deepest folder it may include. Only for rules without a cycle."""
        depth = {}

        def of(folder):
            if folder not in depth:
                depth[folder] = 1 + max((of(dep) for dep in self.dependencies(folder)), default=-1)
            return depth[folder]

        return {folder: of(folder) for folder in self.folders}


def tree_files(root):
    """The tree's files: git's tracked and new ones when root is a checkout's top; else (an exported
    tree, the Debian build's copy, which may sit in an ignored folder of a checkout) every file but
    hidden and build directories."""
    def git(*args):
        return subprocess.run(["git", "-C", root, *args], capture_output=True, check=True).stdout.decode()

    try:
        if os.path.realpath(git("rev-parse", "--show-toplevel").strip()) == os.path.realpath(root):
            out = git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
            return {p for p in out.split("\0") if p and os.path.isfile(os.path.join(root, p))}
    except (OSError, subprocess.CalledProcessError):
        pass
    files = set()
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs
                   if not d.startswith(".") and not os.path.exists(os.path.join(top, d, "CMakeCache.txt"))]
        files.update(os.path.relpath(os.path.join(top, n), root) for n in names)
    return files


def check_tree(root, rules):
    """The breaches, one line each."""
    files = tree_files(root)
    sources = sorted(p for p in files if p.endswith(SOURCES))
    errors = []
    uncovered = {}  # folder -> its first file
    used = set()
    allowances_used = set()  # (folder, line of the allowance, target)
    covered = set()
    exceptions = {(f, h) for f, h, _, _ in rules.exceptions}
    for path in sources:
        folder = rules.folder_of(path)
        if folder is None:
            uncovered.setdefault(os.path.dirname(path) + "/", path)
            continue
        covered.add(folder)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if not match or match.group(1) in rules.generated:
                    continue
                header = match.group(1)
                if header not in files:
                    errors.append(f"{path}:{number}: includes {header}, which does not exist "
                                  "(includes name paths from the repository root)")
                elif (allowance := rules.allowance(folder, header)) is not None:
                    allowances_used.add((folder, allowance[1], allowance[0]))
                elif (path, header) in exceptions:
                    used.add((path, header))
                else:
                    errors.append(f"{path}:{number}: includes {header}, which {folder} may not include "
                                  f"(rules: {rules.name})")
    for folder, first in sorted(uncovered.items()):
        errors.append(f"{first}: no folder line of {rules.name} covers {folder}")
    for folder, rule in rules.folders.items():
        if folder not in covered:
            errors.append(f"{rules.name}:{rule['line']}: folder {folder} holds no {' '.join(SOURCES)} file")
        if rule["runs"] is None:
            errors.append(f"{rules.name}:{rule['line']}: folder {folder} has no runs line")
        for target, number in rule["includes"]:
            if target == "*":
                continue
            exists = any(p.startswith(target) for p in files) if target.endswith("/") else target in files
            if not exists:
                errors.append(f"{rules.name}:{number}: {target} does not exist")
            elif folder in covered and (folder, number, target) not in allowances_used:
                errors.append(f"{rules.name}:{number}: {folder} may include {target}, which none of its files "
                              "includes (remove it)")
    loop = rules.cycle()
    if loop:
        errors.append(f"{rules.name}: the folders' allowances form a cycle: {' -> '.join(loop)} "
                      "(each folder may include only folders below it)")
    for path, header, _, number in rules.exceptions:
        if (path, header) not in used:
            errors.append(f"{rules.name}:{number}: exception no longer needed: {path} does not include "
                          f"{header} against its rule (remove the line)")
    return errors


def render(rules):
    """doc/layout.md's table: one row per folder."""
    def may(rule):
        targets = [t for t, _ in rule["includes"]]
        if "*" in targets:
            return "anything"
        return ", ".join(f"`{t}`" for t in targets) or "nothing else"

    rows = [("Folder", "Runs", "May include, besides its own files")]
    rows += [(f"`{folder}`", rule["runs"] or "", may(rule)) for folder, rule in rules.folders.items()]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines = [f"| {a:<{widths[0]}} | {b:<{widths[1]}} | {c} |" for a, b, c in rows]
    lines.insert(1, f"|{'-' * (widths[0] + 2)}|{'-' * (widths[1] + 2)}|---|")
    if rules.exceptions:
        lines += ["", f"Known breaches, listed in `{rules.name}` until their code moves:", ""]
        lines += [f"- `{f}` includes `{h}`: {why}." for f, h, why, _ in rules.exceptions]
    return "\n".join(lines) + "\n"


def render_order(rules):
    """doc/layout.md's picture of the order: the folders by depth, the lowest first, each with the
    folders it may include; a folder includes only folders on lines above its own."""
    layers = rules.layers()
    width = max(len(folder) for folder in rules.folders)
    lines = ["```"]
    for depth in range(max(layers.values()) + 1):
        for folder in (f for f in rules.folders if layers[f] == depth):
            targets = [t for t, _ in rules.folders[folder]["includes"]]
            deps = "anything" if "*" in targets else " ".join(rules.dependencies(folder))
            lines.append(f"{depth:2}  {folder:<{width}}{'  <- ' + deps if deps else ''}".rstrip())
    lines.append("```")
    return "\n".join(lines) + "\n"


def render_blocks(rules):
    """Each generated block of doc/layout.md, by name."""
    blocks = {"table": render(rules)}
    if rules.cycle() is None:
        blocks["order"] = render_order(rules)
    return blocks


def markers(name):
    return f"<!-- layout:{name} -->", f"<!-- /layout:{name} -->"


def split_doc(root, path, name="table"):
    """DOC as (before, block, after) around block name's markers."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        text = f.read()
    begin_marker, end_marker = markers(name)
    begin, end = text.find(begin_marker + "\n"), text.find(end_marker)
    if begin < 0 or end < begin:
        raise RulesError(f"{path}: no {begin_marker} ... {end_marker} block")
    begin += len(begin_marker) + 1
    return text[:begin], text[begin:end], text[end:]


def doc_blocks(root, path):
    """The generated blocks DOC holds: the table always, the order when it has its markers."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        text = f.read()
    return [name for name in BLOCKS if name == "table" or markers(name)[0] in text]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1].replace("\n", " "))
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--rules", default="scripts/include-rules.txt")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check-doc", metavar="DOC")
    mode.add_argument("--update-doc", metavar="DOC")
    mode.add_argument("--render", action="store_true")
    args = parser.parse_args()

    try:
        rules = Rules(os.path.join(args.root, args.rules), args.rules)
        blocks = render_blocks(rules)
        if args.render:
            sys.stdout.write("\n".join(blocks[name] for name in BLOCKS if name in blocks))
            return 0
        if args.update_doc:
            for name in doc_blocks(args.root, args.update_doc):
                before, _, after = split_doc(args.root, args.update_doc, name)
                with open(os.path.join(args.root, args.update_doc), "w", encoding="utf-8") as f:
                    f.write(before + blocks.get(name, "") + after)
            return 0
        errors = check_tree(args.root, rules)
        if args.check_doc:
            for name in doc_blocks(args.root, args.check_doc):
                _, block, _ = split_doc(args.root, args.check_doc, name)
                if block != blocks.get(name):
                    errors.append(f"{args.check_doc}: its layout {name} is not {args.rules}'s "
                                  f"(scripts/check-includes.py --update-doc {args.check_doc})")
    except OSError as e:
        print(f"check-includes: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    except RulesError as e:
        print(f"check-includes: {e}", file=sys.stderr)
        return 2
    for error in errors:
        print(error, file=sys.stderr)
    if errors:
        return 1
    print(f"check-includes: includes follow {args.rules}" + (f"; {args.check_doc} matches it" if args.check_doc else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
