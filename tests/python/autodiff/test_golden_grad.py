"""Golden tests: `tessera grad` output for tests/golden/grad/NAME.tile equals NAME.expected.
TESSERA_ACCEPT=1 rewrites the .expected files (review the diff before committing)."""
import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]

GOLDEN = ROOT / "tests" / "golden" / "grad"
CASES = sorted(p.stem for p in GOLDEN.glob("*.tile"))


def wrt_of(text):
    """Every declared input of the program."""
    header = re.search(r"function\s*\((.*?)\)\s*->", text, re.S).group(1)
    return ",".join(re.findall(r"([A-Z]\w*)\s*\[", header))


@pytest.mark.parametrize("name", CASES)
def test_printed_gradient_matches_expected(tessera, name):
    src = GOLDEN / f"{name}.tile"
    out = tessera("grad", src, "--wrt", wrt_of(src.read_text())).stdout
    expected = GOLDEN / f"{name}.expected"
    if os.environ.get("TESSERA_ACCEPT") == "1":
        expected.write_text(out)
    assert expected.exists(), f"{expected} missing: run with TESSERA_ACCEPT=1"
    assert out == expected.read_text()


def test_there_are_golden_cases():
    assert {"matmul", "conv2d_strided_padded", "maxpool"} <= set(CASES)
