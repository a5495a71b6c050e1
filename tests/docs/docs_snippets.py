#!/usr/bin/env python3
"""Checks that every C++ and CMake block of the manual is cut from a file the suite builds, and
that every link of the manual to a file of the tree leads to one.

A block is preceded by a comment naming its source and region:

    <!-- snippet: examples/quickstart.cpp#pools -->
    ```cpp
    ...
    ```

and the source marks the region with `// snippet-begin: pools` and `// snippet-end: pools`
(`#` in CMake files). The block must equal the region, markers of other regions inside it left
out and its common indentation removed; the source must be named by a CMakeLists.txt of the
tree (so the suite compiles or configures it). Usage:

    docs_snippets.py SOURCE_DIR            fails, listing each block that differs or has no source
    docs_snippets.py SOURCE_DIR --write    writes every block from its source instead
"""
import pathlib
import re
import sys

CHECKED_LANGUAGES = {"cpp", "c++", "cmake"}
SNIPPET = re.compile(r"<!--\s*snippet:\s*(\S+?)#(\S+)\s*-->")
MARKER = re.compile(r"^\s*(?://|#)\s*snippet-(begin|end):\s*(\S+)\s*$")


def pages(root):
    yield root / "README.md"
    for folder in ("guide", "cookbook"):
        yield from sorted((root / "docs" / folder).glob("*.md"))


def region(root, path, name):
    """The region's lines, dedented, or an error message."""
    source = root / path
    if not source.is_file():
        return None, f"{path} does not exist"
    lines = source.read_text().splitlines()
    inside, found, kept = False, False, []
    for line in lines:
        marker = MARKER.match(line)
        if marker and marker.group(2) == name:
            if marker.group(1) == "begin":
                if found:
                    return None, f"{path} marks region '{name}' twice"
                inside = found = True
            else:
                inside = False
            continue
        if inside and not marker:
            kept.append(line.rstrip())
    if not found:
        return None, f"{path} has no region '{name}' (// snippet-begin: {name})"
    if inside:
        return None, f"{path}: region '{name}' has no snippet-end"
    indents = [len(line) - len(line.lstrip()) for line in kept if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in kept], None


def built_by_suite(root, path):
    """Whether the CMakeLists.txt of the file's folder, or of one above it, names the file (its
    name, or its stem as a word: examples are listed by stem), or it is one."""
    source = pathlib.PurePosixPath(path)
    if source.name == "CMakeLists.txt":
        return True
    name = re.compile(r"(?<![\w.-])(" + re.escape(source.name) + "|" + re.escape(source.stem) +
                      r")(?![\w-])")
    folder = (root / path).parent
    while True:
        lists = folder / "CMakeLists.txt"
        if lists.is_file() and name.search(lists.read_text()):
            return True
        if folder == root:
            return False
        folder = folder.parent


def check_page(root, page, write):
    """Errors of one page; with `write`, its blocks made from their sources."""
    errors, out = [], []
    lines = page.read_text().splitlines()
    name = page.relative_to(root)
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        fence = re.match(r"^(\s*)```(\S*)\s*$", line)
        if not fence:
            i += 1
            continue
        language = fence.group(2)
        end = i + 1
        while end < len(lines) and not re.match(r"^\s*```\s*$", lines[end]):
            end += 1
        block = [each[len(fence.group(1)):] for each in lines[i + 1:end]]
        if language in CHECKED_LANGUAGES:
            before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            wanted = SNIPPET.search(before)
            if not wanted:
                errors.append(f"{name}:{i + 1}: a {language} block names no source "
                              "(<!-- snippet: PATH#REGION --> before it)")
            else:
                path, region_name = wanted.groups()
                cut, error = region(root, path, region_name)
                if error:
                    errors.append(f"{name}:{i + 1}: {error}")
                elif not built_by_suite(root, path):
                    errors.append(f"{name}:{i + 1}: {path} is built by no CMakeLists.txt")
                elif write:
                    block = cut
                elif block != cut:
                    errors.append(f"{name}:{i + 1}: the block differs from {path}#{region_name} "
                                  "(docs_snippets.py SOURCE_DIR --write takes the source's)")
        out.extend(fence.group(1) + each if each else each for each in block)
        if end < len(lines):
            out.append(lines[end])
        i = end + 1
    if write:
        page.write_text("\n".join(out) + "\n")
    return errors


def dead_links(root, page):
    """The links of `page` to files of the tree that are not there."""
    errors = []
    for number, line in enumerate(page.read_text().splitlines(), 1):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", line):
            if "://" not in target and not (page.parent / target).exists():
                errors.append(f"{page.relative_to(root)}:{number}: a link to {target}, "
                              "which is not there")
    return errors


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    root = pathlib.Path(sys.argv[1]).resolve()
    write = "--write" in sys.argv[2:]
    errors, blocks = [], 0
    for page in pages(root):
        if page.is_file():
            errors += check_page(root, page, write) + dead_links(root, page)
            blocks += page.read_text().count("<!-- snippet:")
    for error in errors:
        print(error)
    print(f"docs_snippets: {blocks} blocks, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
