"""The README's Python snippets run as written, each in a fresh interpreter, with the FB2010
trace where it is found and without it (``COFLOWOPT_FB2010`` pointing nowhere)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
# the manual's pages (docs/, built by mkdocs): their snippets run as written too
PAGES = sorted((ROOT / "docs").rglob("*.md"))
DOC_BLOCKS = [(p.relative_to(ROOT).as_posix(), b) for p in PAGES
              for b in re.findall(r"```python\n(.*?)```", p.read_text(), flags=re.S)]


def test_readme_has_snippets() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("trace", ["located", "absent"])
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_snippet_runs(index: int, trace: str, tmp_path: Path) -> None:
    if trace == "located" and index != 0:
        pytest.skip("only the first session reads the trace")
    env = dict(os.environ)
    if trace == "absent":
        env["COFLOWOPT_FB2010"] = str(tmp_path / "no-trace-here.txt")
    out = subprocess.run([sys.executable, "-c", BLOCKS[index]], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"README snippet {index} failed:\n{BLOCKS[index]}\n{out.stderr}"


def test_the_manual_has_snippets() -> None:
    assert len(DOC_BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(DOC_BLOCKS)),
                         ids=[f"{p}-{i}" for i, (p, _) in enumerate(DOC_BLOCKS)])
def test_manual_snippet_runs(index: int, tmp_path: Path) -> None:
    page, code = DOC_BLOCKS[index]
    env = dict(os.environ)
    env["COFLOWOPT_FB2010"] = str(tmp_path / "no-trace-here.txt")  # the small path
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"{page} snippet failed:\n{code}\n{out.stderr}"
