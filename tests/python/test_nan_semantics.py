"""NaN in max and min (docs/tile-semantics.md): a NaN anywhere among the values of a `>` or `<`
contraction, or on either side of the elementwise max and min, gives NaN, on every device in
every order the compiled code visits the values (vectorized, tiled, split over work-items)."""
import numpy as np
import pytest

import tessera as ts

DEVICES = ts.devices()

MAX_POOL = """function (I[N, H, W, C]) -> (O) {
  O[n, x, y, c : N, H / 2, W / 2, C] = >(I[n, 2*x + i, 2*y + j, c]), i < 2, j < 2;
}"""


def run(program, device, **inputs):
    return ts.run(program, inputs, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool_with_one_nan_per_window(device):
    image = np.array([[np.nan, 1, 5, np.inf], [2, 3, np.nan, 4],
                      [0, -1, -3, 7], [np.nan, -2, 9, np.nan]], np.float32).reshape(1, 4, 4, 1)
    out = run(MAX_POOL, device, I=image)["O"].reshape(-1)
    np.testing.assert_array_equal(out, np.full(4, np.nan, np.float32))
    image[0, 0, 0, 0] = 8  # windows without NaN are plain maxima
    image[0, 3, 0, 0] = -5
    out = run(MAX_POOL, device, I=image)["O"].reshape(-1)
    np.testing.assert_array_equal(out, np.array([8, np.nan, 0, np.nan], np.float32))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("agg, reduce", [(">", np.max), ("<", np.min)])
def test_max_and_min_contractions_propagate_nan(device, agg, reduce):
    a = np.array([np.nan, 1, 2, np.nan], np.float32)
    r = run(f"function (A[N]) -> (R) {{ R[i : 1] = {agg}(A[j]); }}", device, A=a)["R"]
    np.testing.assert_array_equal(r, np.array([np.nan], np.float32))
    # Rows of odd length, NaN first, last or in the middle: vector remainders and partial tiles.
    rng = np.random.default_rng(7)
    m = rng.uniform(-5, 5, (37, 203)).astype(np.float32)
    for row, col in [(0, 0), (1, 202), (2, 101), (3, 7), (5, 0), (5, 150), (36, 64)]:
        m[row, col] = np.nan
    m[4, :] = np.inf
    program = f"function (M[R, C]) -> (O, P) {{ O[r : R] = {agg}(M[r, c]); P[c : C] = {agg}(M[r, c]); }}"
    out = run(program, device, M=m)
    np.testing.assert_array_equal(out["O"], reduce(m, axis=1))
    np.testing.assert_array_equal(out["P"], reduce(m, axis=0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fn, ref", [("max", np.maximum), ("min", np.minimum)])
def test_elementwise_max_and_min_propagate_nan(device, fn, ref):
    a = np.array([np.nan, 1, np.nan, -np.inf, 3, 0, 2, np.nan, 5] * 7, np.float32)
    b = np.array([1, np.nan, np.nan, 0, np.inf, -0.5, 2, 4, 1] * 7, np.float32)
    out = run(f"function (A, B) -> (C) {{ C = {fn}(A, B); }}", device, A=a, B=b)["C"]
    np.testing.assert_array_equal(out, ref(a, b))
