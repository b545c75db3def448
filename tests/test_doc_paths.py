"""The contributor's map is true: the repository paths the docs cite exist, and
their relative links (and the anchors in them) resolve.

Scanned: README.md, CONTRIBUTING.md, SECURITY.md, fuzz/README.md and
docs/**/*.md. A cited path is an inline code span (or a word of one) starting
with one of ``PREFIXES``; a ``:line``, ``::test`` or ``#anchor`` tail is
dropped, and ``{a,b}`` is expanded. A path with a placeholder (``<id>``) or a
glob (``*``) is not expanded: only its directory part before the first
placeholder is checked, so a moved directory is still caught.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).parents[1]
PREFIXES = ("python/", "rust/", "tests/", "benches/", "docs/", "fuzz/", "examples/", ".ci/")

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
_TAIL = re.compile(r"(::.*|:\d[\d\-, ]*|#.*)$")
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
_TEMPLATE = re.compile(r"[<*?\[]")


def doc_files() -> list[Path]:
    named = [ROOT / name for name in ("README.md", "CONTRIBUTING.md", "SECURITY.md", "fuzz/README.md")]
    return [path for path in named if path.exists()] + sorted((ROOT / "docs").rglob("*.md"))


def prose(path: Path) -> str:
    """The file's text without its fenced code blocks (their lines keep their count)."""
    text = path.read_text(encoding="utf-8")
    return _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def expand(path: str) -> list[str]:
    match = _BRACES.search(path)
    if match is None:
        return [path]
    head, tail = path[: match.start()], path[match.end() :]
    return [spelled for choice in match.group(1).split(",") for spelled in expand(head + choice + tail)]


def cited_paths(text: str) -> Iterator[tuple[int, str]]:
    """(line, path) for every repository path cited in a code span of ``text``."""
    for match in _CODE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        for spelled in match.group(1).split():
            word = spelled.rstrip(".,;)")
            if word.startswith(PREFIXES):
                yield line, _TAIL.sub("", word)


def exists(path: str) -> bool:
    for spelled in expand(path):
        template = _TEMPLATE.search(spelled)
        # `tests/providers/fixtures/<id>/` is checked as `tests/providers/fixtures/`
        checked = spelled if template is None else spelled[: spelled.rfind("/", 0, template.start()) + 1]
        if not (ROOT / checked).exists():
            return False
    return True


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in _HEADING.findall(prose(path)):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def test_cited_repository_paths_exist() -> None:
    missing = [
        f"{doc.relative_to(ROOT)}:{line}: `{path}`"
        for doc in doc_files()
        for line, path in cited_paths(prose(doc))
        if not exists(path)
    ]
    assert not missing, "cited paths that do not exist in the repository:\n" + "\n".join(missing)


def test_relative_links_resolve() -> None:
    broken = []
    for doc in doc_files():
        text = prose(doc)
        for match in _LINK.finditer(text):
            target = match.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            line = text.count("\n", 0, match.start()) + 1
            file_part, _, anchor = target.partition("#")
            linked = (doc.parent / file_part).resolve() if file_part else doc
            if not linked.exists():
                broken.append(f"{doc.relative_to(ROOT)}:{line}: ({target}) -> no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{doc.relative_to(ROOT)}:{line}: ({target}) -> no heading #{anchor}")
    assert not broken, "relative links that do not resolve:\n" + "\n".join(broken)


def test_the_scan_sees_the_map() -> None:
    """The scan is not vacuous: it reads every page, and a cited path and a stale one are told apart."""
    names = {str(doc.relative_to(ROOT)) for doc in doc_files()}
    assert {"README.md", "CONTRIBUTING.md", "docs/api.md", "docs/providers.md"} <= names
    cited = {path for doc in doc_files() for _, path in cited_paths(prose(doc))}
    assert "python/thinkseal/providers/__init__.py" in cited
    assert exists("tests/providers/fixtures/<id>/")
    assert exists("rust/core/tests/{vectors,ledger}.rs")
    assert not exists("tests/providers/emulators/<id>.py")
    assert list(cited_paths("see `docs/api.md:866-871` and `tests/x.py::test_y`")) == [
        (1, "docs/api.md"),
        (1, "tests/x.py"),
    ]
    assert slug("Anthropic: thinking options (`thinking`)") == "anthropic-thinking-options-thinking"
