"""Compares a device's outputs with interp's, by dtype. Which differences are legitimate
(docs/tile-semantics.md, docs/fuzzing.md): float sums may run in another order, and float math may
be computed in the dtype itself where interp uses double; both are bounded by how sensitive the
result is. So interp also runs on inputs perturbed by a few ulps, and each element's tolerance is the
dtype's base tolerance plus a multiple of how far interp's own result moved. Elements whose NaN-ness,
infinity or (for integers and bool, which must otherwise match exactly) value changed under
perturbation are ill-conditioned and not compared. NaN positions must match."""
import numpy as np

# (rtol, atol) per float dtype
BASE = {"float16": (2e-3, 1e-3), "float32": (1e-4, 1e-6), "float64": (1e-10, 1e-13)}
# relative size of the input perturbation (a few ulps of each dtype) and the tolerance's multiple
PERTURB = {"float16": 2.0 ** -8, "float32": 2.0 ** -21, "float64": 2.0 ** -50}
SENSITIVITY_FACTOR = 4.0


def perturb(inputs, rng):
    out = {}
    for k, v in inputs.items():
        v = np.asarray(v)
        if v.dtype.kind == "f" and v.size:
            fi = np.finfo(v.dtype)
            with np.errstate(all="ignore"):
                u = rng.uniform(-1, 1, size=v.shape)
                p = (v.astype(np.float64) * (1 + PERTURB[v.dtype.name] * u))
                p = np.where(np.isfinite(v), np.clip(p, -float(fi.max), float(fi.max)), v)
                out[k] = p.astype(v.dtype)
        else:
            out[k] = v
    return out


def compare_output(got, want, perturbed):
    """None when `got` agrees with `want` (interp), else (kind, message); perturbed: interp's
    outputs on perturbed inputs."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype:
        return "dtype", f"dtype {got.dtype}, interp gives {want.dtype}"
    if got.shape != want.shape:
        return "shape", f"shape {got.shape}, interp gives {want.shape}"
    if want.size == 0:
        return None
    stable = np.ones(want.shape, dtype=bool)
    if want.dtype.kind == "f":
        w = want.astype(np.float64)
        g = got.astype(np.float64)
        sens = np.zeros(want.shape)
        for p in perturbed:
            p = np.asarray(p).astype(np.float64)
            stable &= (np.isnan(p) == np.isnan(w)) & (np.isinf(p) == np.isinf(w))
            stable &= ~np.isinf(w) | (p == w)
            with np.errstate(all="ignore"):
                d = np.where(np.isfinite(p) & np.isfinite(w), np.abs(p - w), 0)
            sens = np.maximum(sens, d)
        rtol, atol = BASE[want.dtype.name]
        bad_nan = stable & (np.isnan(w) != np.isnan(g))
        if bad_nan.any():
            idx = tuple(np.argwhere(bad_nan)[0])
            kind = "nan-lost" if np.isnan(w[idx]) else "nan-extra"
            return kind, f"{int(bad_nan.sum())} NaN positions differ, first at {list(idx)}: got {g[idx]!r}, want {w[idx]!r}"
        with np.errstate(all="ignore"):
            inf_bad = stable & (np.isinf(w) | np.isinf(g)) & ~np.isnan(w) & (g != w)
            allowed = atol + rtol * np.abs(w) + SENSITIVITY_FACTOR * sens
            val_bad = stable & np.isfinite(w) & np.isfinite(g) & (np.abs(g - w) > allowed)
        for kind, bad in (("inf", inf_bad), ("value", val_bad)):
            if bad.any():
                idx = tuple(np.argwhere(bad)[0])
                return kind, (f"{int(bad.sum())} of {want.size} elements differ, first at {list(idx)}: "
                              f"got {g[idx]!r}, want {w[idx]!r}")
        return None
    for p in perturbed:
        stable &= np.asarray(p) == want
    bad = stable & (got != want)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        return "exact", (f"{int(bad.sum())} of {want.size} elements differ, first at {list(idx)}: "
                         f"got {got[idx]!r}, want {want[idx]!r}")
    return None
