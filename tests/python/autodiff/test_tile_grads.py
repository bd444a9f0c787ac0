"""Gradients of Tile programs (tessera.grad, run on interp) vs central finite differences in
float64. Relative error bound per case: rtol 1e-6 (differences with eps 1e-6 on O(1) values)."""
import numpy as np
import pytest

import tessera

from gradcheck import check_tile_grad, numeric_grad


def r(rng, *shape):
    return rng.standard_normal(shape)


def test_matmul(rng):
    p = "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }"
    check_tile_grad(p, {"A": r(rng, 3, 4), "B": r(rng, 4, 2)}, ["A", "B"])


def test_conv_with_padding_and_stride(rng):
    p = """function (I[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) {
      O[n, x, y, co : N, (H + 1) / 2, (W + 1) / 2, CO] =
          +(I[n, 2 * x + kx - 1, 2 * y + ky - 1, ci] * K[kx, ky, ci, co]);
    }"""
    check_tile_grad(p, {"I": r(rng, 1, 5, 4, 2), "K": r(rng, 3, 3, 2, 2)}, ["I", "K"])


def test_max_pool(rng):
    p = """function (I[N, H, W, C]) -> (O) {
      O[n, x, y, c : N, H / 2, W / 2, C] = >(I[n, 2 * x + i, 2 * y + j, c]), i < 2, j < 2;
    }"""
    check_tile_grad(p, {"I": r(rng, 1, 4, 4, 2)}, ["I"])


def test_max_pool_ties_give_every_tied_element_the_gradient():
    p = "function (I[N]) -> (O) { O[0 : 1] = >(I[i]); }"
    g = tessera.run(tessera.grad(p, ["I"]), {"I": np.array([1.0, 3.0, 3.0]), "d_O": np.array([2.0])})["d_I"]
    np.testing.assert_array_equal(g, [0.0, 2.0, 2.0])




def test_softmax(rng):
    p = """function (X[N, C]) -> (S) {
      M[n : N] = >(X[n, c]);
      MC[n, c : N, 1] = =(M[n]);
      E = exp(X - MC);
      Z[n, c : N, 1] = +(E[n, k]), c < 1;
      S = E / Z;
    }"""
    check_tile_grad(p, {"X": r(rng, 2, 4)}, ["X"])


def test_elementwise_chain_with_broadcasting(rng):
    p = """function (A[M, N], B[N], C[M, 1], D[]) -> (Y) {
      T = tanh(A * B + C) / (1 + exp(-D));
      Y = sigmoid(T) * sqrt(exp(B)) + pow(abs(A) + 1, 1.5) - log(2 + sin(C));
    }"""
    check_tile_grad(p, {"A": r(rng, 3, 4), "B": r(rng, 4), "C": r(rng, 3, 1), "D": r(rng)},
                    ["A", "B", "C", "D"])


def test_broadcast_between_differently_named_dims(rng):
    # P or Q may be 1 at bind time; the gradient is exact either way.
    p = "function (A[P, N], B[Q, N]) -> (Y) { Y = A * B; }"
    check_tile_grad(p, {"A": r(rng, 1, 3), "B": r(rng, 4, 3)}, ["A", "B"])
    check_tile_grad(p, {"A": r(rng, 4, 3), "B": r(rng, 1, 3)}, ["A", "B"])
    check_tile_grad(p, {"A": r(rng, 4, 3), "B": r(rng, 4, 3)}, ["A", "B"])


def test_product_with_zeros(rng):
    p = "function (X[N, K]) -> (P) { P[n : N] = *(X[n, k]); }"
    x = r(rng, 4, 3)
    x[1, 0] = 0.0            # one zero: only that element gets a gradient
    x[2, 0] = x[2, 2] = 0.0  # two zeros: no gradient at all
    check_tile_grad(p, {"X": x}, ["X"])
    g = tessera.run(tessera.grad(p, ["X"]), {"X": x, "d_P": np.ones(4)})["d_X"]
    np.testing.assert_allclose(g[1], [x[1, 1] * x[1, 2], 0, 0], rtol=1e-12)
    np.testing.assert_array_equal(g[2], [0, 0, 0])


def test_gather(rng):
    p = "function (X[N, C], I[K]) -> (Y) { G = gather(X, I); Y = G * G; }"
    check_tile_grad(p, {"X": r(rng, 4, 3), "I": np.array([2, 0, 2, 3], np.int32)}, ["X"])


def test_reshape_and_several_uses(rng):
    p = "function (X[A, B]) -> (Y) { R = reshape(X, B, A); Y = R * R + exp(R); }"
    check_tile_grad(p, {"X": r(rng, 2, 3)}, ["X"])


def test_default_tensor(rng):
    p = """function (X[N], T[M]) -> (O) {
      O[i : M] = +(X[i]), i < 2 default T;
    }"""
    check_tile_grad(p, {"X": r(rng, 3), "T": r(rng, 5)}, ["X", "T"])


def test_ternary_contraction_gradient_goes_to_the_value(rng):
    p = """function (A[N], B[N], C[N]) -> (O) {
      O[i : N] = +(A[i] == B[j] ? C[j]);
    }"""
    a = np.array([1.0, 2.0, 3.0])
    check_tile_grad(p, {"A": a, "B": np.array([2.0, 2.0, 5.0]), "C": r(rng, 3)}, ["C"])


def test_wrt_something_of_does_not_depend_on_gives_zeros(rng):
    p = "function (A[N], B[N]) -> (Y) { Y = exp(A); }"
    g = tessera.run(tessera.grad(p, ["A", "B"]), {"A": r(rng, 3), "B": r(rng, 3), "d_Y": np.ones(3)})
    np.testing.assert_array_equal(g["d_B"], np.zeros(3))


def test_mlp_with_softmax_cross_entropy(rng):
    p = """function (X[N, D], W1[D, H], B1[H], W2[H, C], B2[C], T[N, C]) -> (L) {
      A1[n, h : N, H] = +(X[n, d] * W1[d, h]);
      H1 = relu(A1 + B1);
      A2[n, c : N, C] = +(H1[n, h] * W2[h, c]);
      Z = A2 + B2;
      M[n, c : N, 1] = >(Z[n, k]), c < 1;
      E = exp(Z - M);
      S[n, c : N, 1] = +(E[n, k]), c < 1;
      LP = Z - M - log(S);
      L[] = +(T[n, c] * LP[n, c]);
      Loss = neg(L);
    }"""
    p = p.replace("-> (L)", "-> (Loss)")
    t = np.eye(3)[[0, 2, 1, 2]]
    inputs = {"X": r(rng, 4, 3), "W1": r(rng, 3, 5), "B1": r(rng, 5), "W2": r(rng, 5, 3), "B2": r(rng, 3), "T": t}
    check_tile_grad(p, inputs, ["W1", "B1", "W2", "B2"], of="Loss")


def test_conv_net_with_batch_norm_and_max_pool(rng):
    p = """function (X[N, H, W, CI], K1[3, 3, CI, C1], G[C1], Bt[C1], K2[3, 3, C1, C2]) -> (Loss) {
      A[n, x, y, c : N, H, W, C1] = +(X[n, x + kx - 1, y + ky - 1, ci] * K1[kx, ky, ci, c]);
      Mu[c : C1] = +(A[n, x, y, c]);
      Mean = Mu / (N * H * W);
      Dv = A - Mean;
      V[c : C1] = +(Dv[n, x, y, c] * Dv[n, x, y, c]);
      Var = V / (N * H * W);
      Bn = Dv / sqrt(Var + 0.001) * G + Bt;
      R = relu(Bn);
      P[n, x, y, c : N, H / 2, W / 2, C1] = >(R[n, 2 * x + i, 2 * y + j, c]), i < 2, j < 2;
      O[n, x, y, c : N, H / 2, W / 2, C2] = +(P[n, x + kx - 1, y + ky - 1, ci] * K2[kx, ky, ci, c]);
      Sq = O * O;
      Loss[] = +(Sq[n, x, y, c]);
    }"""
    inputs = {"X": r(rng, 2, 4, 4, 2), "K1": r(rng, 3, 3, 2, 3), "G": r(rng, 3), "Bt": r(rng, 3),
              "K2": r(rng, 3, 3, 3, 2)}
    check_tile_grad(p, inputs, ["K1", "G", "Bt", "K2"], rtol=1e-5, atol=1e-6)


# ---- PlaidML's builtins: their own derivatives (DerivDefines in PlaidML's tile/lang/builtins.cc) ----

def test_builtin_softmax_and_logsoftmax(rng):
    p = """function (X[N, C]) -> (Y) {
      Y = builtin_softmax(X, N, C) * builtin_logsoftmax(X * 0.5, N, C);
    }"""
    check_tile_grad(p, {"X": r(rng, 3, 5)}, ["X"])


def test_builtin_softmax_sizes_as_plaidml_composes_them(rng):
    # constants as statements for the dimensions, a literal-sized input
    p = """function (X_I_0[3, 4]) -> (X_T2) {
      X_T0 = 3;
      X_T1 = 4;
      X_T2 = builtin_logsoftmax(X_I_0, X_T0, X_T1);
    }"""
    check_tile_grad(p, {"X_I_0": r(rng, 3, 4)}, ["X_I_0"])


def test_builtin_binary_crossentropy_is_the_gradient_of_its_mean(rng):
    # PlaidML's derivative divides by X3 and ignores what flows into Y: exact for the mean loss.
    p = """function (P[N, C], T[N, C]) -> (L) {
      B = builtin_binary_crossentropy(P, T, N * C);
      S[] = +(B[n, c]);
      L = S / (N * C);
    }"""
    inputs = {"P": rng.uniform(0.1, 0.9, (3, 4)), "T": rng.uniform(0.0, 1.0, (3, 4))}
    check_tile_grad(p, inputs, ["P", "T"], d_of=1.0)


def test_builtin_binary_crossentropy_ignores_the_seed(rng):
    p = "function (P[N], T[N]) -> (B) { B = builtin_binary_crossentropy(P, T, 5); }"
    inputs = {"P": rng.uniform(0.1, 0.9, 4), "T": rng.uniform(0.0, 1.0, 4)}
    g = tessera.grad(p, ["P", "T"])
    one = tessera.run(g, {**inputs, "d_B": np.ones(4)}, device="interp")
    other = tessera.run(g, {**inputs, "d_B": r(rng, 4)}, device="interp")
    P, T = inputs["P"], inputs["T"]
    np.testing.assert_allclose(one["d_P"], (-T / P + (1 - T) / (1 - P)) / 5, rtol=1e-12)
    np.testing.assert_allclose(one["d_T"], (np.log(1 - P) - np.log(P)) / 5, rtol=1e-12)
    for name in ("d_P", "d_T"):
        np.testing.assert_array_equal(one[name], other[name])


def test_reverse_grad_reverses_and_scales(rng):
    # Forward it is the identity; the gradient through it is scaled by -S. Finite differences of the
    # path through it (without it) give the unscaled part; the other use of X adds d_Y.
    p = "function (X[N], S[]) -> (Y) { Y = 2 * reverse_grad(tanh(X), S) + X; }"
    path = "function (X[N]) -> (Y) { Y = 2 * tanh(X); }"
    x, s, d_y = r(rng, 4), np.array(0.75), r(rng, 4)
    y = tessera.run(p, {"X": x, "S": s}, device="interp")["Y"]
    np.testing.assert_allclose(y, 2 * np.tanh(x) + x, rtol=1e-12)
    fd = numeric_grad(lambda: float(np.sum(tessera.run(path, {"X": x}, device="interp")["Y"] * d_y)), x)
    got = tessera.run(tessera.grad(p, ["X", "S"]), {"X": x, "S": s, "d_Y": d_y}, device="interp")
    np.testing.assert_allclose(got["d_X"], -0.75 * fd + d_y, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(got["d_S"], 0.0)
