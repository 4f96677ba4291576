"""The Python examples of docs/python.md and README.md run as written (on every rank
together); a block marked <!-- fragment --> is only compiled."""
import os
import re

import pytest

from conftest import assert_all

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
FENCE = re.compile(r"^```python\s*$(.*?)^```\s*$", re.S | re.M)
if not os.path.exists(os.path.join(ROOT, "docs", "python.md")):
    # Tests run from an sdist (tools/check-sdist): the docs are the checkout's.
    pytest.skip("docs/python.md is not here (tests outside the checkout)", allow_module_level=True)


def blocks():
    out = []
    for doc in ("docs/python.md", "README.md"):
        path = os.path.join(ROOT, doc)
        text = open(path, encoding="utf-8").read()
        for m in FENCE.finditer(text):
            before = text[:m.start()].rstrip().splitlines()
            fragment = bool(before) and "<!-- fragment -->" in before[-1]
            line = text[:m.start()].count("\n") + 2
            out.append(pytest.param(m.group(1), fragment, id=f"{doc}:{line}"))
    return out


@pytest.mark.parametrize("code,fragment", blocks())
def test_doc_example(code, fragment):
    compiled = compile(code, "<doc>", "exec")
    if fragment:
        return
    error = None
    try:
        exec(compiled, {"__name__": "__doc_example__"})
    except Exception as e:  # reported collectively below
        error = f"{type(e).__name__}: {e}"
    assert_all(error is None, error)
