"""Finite-difference helpers for the autodiff tests: central differences in float64 on interp."""
import numpy as np


def numeric_grad(f, x, eps=1e-6):
    """d(sum(f(x) * seed))/dx by central differences; f returns an array."""
    g = np.zeros_like(x)
    flat = x.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        hi = f()
        flat[i] = old - eps
        lo = f()
        flat[i] = old
        g.reshape(-1)[i] = (hi - lo) / (2 * eps)
    return g


def check_tile_grad(program, inputs, wrt, of=None, rtol=1e-6, atol=1e-8, seed=0, d_of=None):
    """Runs tessera.grad's program and compares every d_X with central differences of
    sum(OF * d_OF) (float64, interp); d_OF is random unless given. Returns the max relative error seen."""
    import tessera  # the built module; imported here, where a gradient is checked

    rng = np.random.default_rng(seed)
    if of is None:
        of = program.split("->")[1].split("(")[1].split(")")[0].strip()
    gprog = tessera.grad(program, wrt, of)
    out = tessera.run(program, inputs, device="interp")[of]
    if d_of is None:
        d_of = rng.standard_normal(out.shape)
    d_of = np.broadcast_to(d_of, out.shape).astype(np.float64)
    res = tessera.run(gprog, {**inputs, "d_" + of: d_of}, device="interp")
    worst = 0.0
    for x in wrt:
        def f():
            return float(np.sum(tessera.run(program, inputs, device="interp")[of] * d_of))
        num = numeric_grad(f, inputs[x])
        got = res["d_" + x]
        assert got.shape == inputs[x].shape, (x, got.shape)
        np.testing.assert_allclose(got, num, rtol=rtol, atol=atol, err_msg=f"d_{x}")
        scale = max(np.max(np.abs(num)), 1e-12)
        worst = max(worst, float(np.max(np.abs(got - num)) / scale))
    return worst
