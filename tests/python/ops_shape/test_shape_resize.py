"""Resizing NHWC images on the interp device.

nearest follows Keras 2.3 UpSampling2D (integer factors; out[y, x] = in[y // sh, x // sw]);
bilinear follows TF2 tf.image.resize (half-pixel centres, no antialiasing). The numpy references
below are written from those definitions, not from Tessera's contraction form.
"""
import numpy as np
import pytest
import tessera

from shape_util import assert_same, random_array, run_op

# Bilinear weights are float32 in both Tessera and TF; values here are O(1).
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-5, atol=1e-5)}


def np_upsample_nearest(x, sh, sw):
    n, h, w, c = x.shape
    ys = np.arange(h * sh) // sh
    xs = np.arange(w * sw) // sw
    return x[:, ys][:, :, xs]


def np_resize_bilinear(x, oh, ow):
    """TensorFlow's resize_bilinear with half_pixel_centers (its kernel's structure: top, bottom, lerp)."""
    x = x.astype(np.float64)

    def interpolation(out_size, in_size):
        scale = np.float32(in_size) / np.float32(out_size)
        src = (np.arange(out_size, dtype=np.float64) + 0.5) * scale - 0.5
        lower = np.maximum(np.floor(src), 0).astype(np.int64)
        upper = np.minimum(np.ceil(src), in_size - 1).astype(np.int64)
        return lower, upper, src - np.floor(src)

    ly, uy, fy = interpolation(oh, x.shape[1])
    lx, ux, fx = interpolation(ow, x.shape[2])
    fx = fx[None, None, :, None]
    top = x[:, ly][:, :, lx] + (x[:, ly][:, :, ux] - x[:, ly][:, :, lx]) * fx
    bottom = x[:, uy][:, :, lx] + (x[:, uy][:, :, ux] - x[:, uy][:, :, lx]) * fx
    return top + (bottom - top) * fy[None, :, None, None]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("scale", [(1, 1), (2, 2), (3, 1), (2, 3)])
def test_nearest_upsampling_like_keras(rng, dtype, scale):
    x = random_array(rng, (2, 3, 2, 3), dtype)
    want = np_upsample_nearest(x, *scale)
    assert_same(run_op("resize_nearest", [x], scale=list(scale)), want)
    assert_same(run_op("resize", [x], size=[3 * scale[0], 2 * scale[1]]), want)  # nearest is the default


def test_nearest_rejects_a_size_that_is_not_a_multiple():
    with pytest.raises(tessera.OpError, match="resize_nearest: nearest resizing needs size 5"):
        run_op("resize_nearest", [np.zeros((1, 2, 2, 1), np.float32)], size=[5, 4])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [(4, 4), (3, 5), (2, 2), (1, 3), (7, 2), (5, 8)])
def test_bilinear_like_tf_image_resize(rng, dtype, size):
    x = rng.normal(size=(2, 3, 4, 2)).astype(dtype)
    got = run_op("resize_bilinear", [x], size=list(size))
    assert got.dtype == dtype and got.shape == (2, *size, 2)
    np.testing.assert_allclose(got, np_resize_bilinear(x, *size), **TOL[dtype])


def test_bilinear_with_scale_and_size_one_input(rng):
    x = rng.normal(size=(1, 1, 3, 2)).astype(np.float32)
    got = run_op("resize", [x], method="bilinear", scale=[2, 2])
    np.testing.assert_allclose(got, np_resize_bilinear(x, 2, 6), **TOL[np.float32])


def test_bilinear_of_integers_gives_float32(rng):
    x = rng.integers(0, 50, size=(1, 3, 3, 1)).astype(np.int32)
    got = run_op("resize_bilinear", [x], size=[5, 4])
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np_resize_bilinear(x, 5, 4), **TOL[np.float32])


def test_bilinear_two_by_two_to_four_by_four_by_hand():
    # tf.image.resize([[1, 2], [3, 4]], [4, 4]) with half-pixel centres.
    x = np.array([[1, 2], [3, 4]], np.float32).reshape(1, 2, 2, 1)
    want = np.array([[1.0, 1.25, 1.75, 2.0],
                     [1.5, 1.75, 2.25, 2.5],
                     [2.5, 2.75, 3.25, 3.5],
                     [3.0, 3.25, 3.75, 4.0]], np.float32)
    got = run_op("resize_bilinear", [x], size=[4, 4])
    np.testing.assert_allclose(got[0, :, :, 0], want, rtol=1e-6)
