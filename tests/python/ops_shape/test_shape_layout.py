"""concatenate, slice, pad, transpose, reshape, flatten, squeeze, expand_dims, tile and repeat
against numpy on the interp device; every result must equal numpy's exactly."""
import sys

import numpy as np
import pytest
import tessera

from shape_util import DTYPES, assert_same, random_array, random_shape, run_op


# ---- concatenate ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(3))
def test_concatenate_any_number_of_inputs_on_a_random_axis(rng, dtype, case):
    shape = random_shape(rng, max_rank=3)
    axis = int(rng.integers(-len(shape), len(shape)))
    parts = []
    for _ in range(int(rng.integers(1, 5))):
        s = list(shape)
        s[axis] = int(rng.integers(1, 4))
        parts.append(random_array(rng, s, dtype))
    assert_same(run_op("concatenate", parts, axis=axis), np.concatenate(parts, axis=axis))


def test_concatenate_defaults_to_the_last_axis(rng):
    a, b = rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(2, 1)).astype(np.float32)
    assert_same(run_op("concatenate", [a, b]), np.concatenate([a, b], axis=-1))


def test_concatenate_rejects_mismatched_shapes():
    a, b = np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)
    with pytest.raises(tessera.OpError, match="concatenate: input 1 has shape"):
        run_op("concatenate", [a, b], axis=0)


# ---- slice ------------------------------------------------------------------------------------

def slice_attrs(slices):
    """The op's attributes for a tuple of Python slices: None bounds become mask bits."""
    begin, end, step, begin_mask, end_mask = [], [], [], 0, 0
    for a, s in enumerate(slices):
        begin.append(0 if s.start is None else s.start)
        end.append(0 if s.stop is None else s.stop)
        step.append(1 if s.step is None else s.step)
        begin_mask |= (s.start is None) << a
        end_mask |= (s.stop is None) << a
    return dict(begin=begin, end=end, step=step, begin_mask=begin_mask, end_mask=end_mask)


def random_slice(rng, n):
    bound = lambda: None if rng.random() < 0.25 else int(rng.integers(-n - 2, n + 3))
    step = int(rng.choice([1, 1, 2, 3, -1, -2, n + 1, -(n + 1)]))
    return slice(bound(), bound(), step)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(4))
def test_slice_matches_python_slicing(rng, dtype, case):
    shape = random_shape(rng, max_rank=3, max_dim=6)
    x = random_array(rng, shape, dtype)
    while True:  # results with an empty axis are covered separately
        slices = tuple(random_slice(rng, n) for n in shape[: int(rng.integers(1, len(shape) + 1))])
        if x[slices].size:
            break
    assert_same(run_op("slice", [x], **slice_attrs(slices)), x[slices])


@pytest.mark.parametrize("slices", [
    (slice(None, None, -1),),                 # reversed
    (slice(-1, None, -2), slice(1, None)),    # negative start, negative step
    (slice(None, -2, 7), slice(None, None, -9)),  # steps larger than the dimension
    (slice(-100, 100), slice(100, -100, -1)),  # bounds far outside clamp
    (slice(-sys.maxsize - 1, sys.maxsize, 2),),  # Python's own extremes
    (slice(2, 3), slice(4, 5)),                # size-1 result
])
def test_slice_edge_cases(slices):
    x = np.arange(30, dtype=np.int32).reshape(5, 6)
    assert_same(run_op("slice", [x], **slice_attrs(slices)), x[slices])


def test_slice_with_short_lists_takes_the_rest_whole():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert_same(run_op("slice", [x], begin=[1], end=[2]), x[1:2])
    assert_same(run_op("slice", [x], step=[1, -1]), x[:, ::-1])


def test_slice_to_nothing_gives_an_empty_tensor():
    x = np.arange(5, dtype=np.float32)
    assert_same(run_op("slice", [x], begin=[3], end=[1]), x[3:1])


def test_slice_rejects_step_zero():
    with pytest.raises(tessera.OpError, match="slice: step of axis 0 is 0"):
        run_op("slice", [np.zeros(3, np.float32)], step=[0])


# ---- pad --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", [0, 1])
def test_pad_asymmetric_constant(rng, dtype, value):
    shape = random_shape(rng, max_rank=3)
    x = random_array(rng, shape, dtype)
    pairs = [(int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in shape]
    flat = [p for pair in pairs for p in pair]
    want = np.pad(x, pairs, mode="constant", constant_values=np.asarray(value).astype(x.dtype))
    assert_same(run_op("pad", [x], pads=flat, value=value), want)


def test_pad_float_value_and_size_one_dims(rng):
    x = rng.normal(size=(1, 3, 1)).astype(np.float32)
    want = np.pad(x, [(0, 2), (1, 0), (3, 1)], constant_values=-2.5)
    assert_same(run_op("pad", [x], pads=[0, 2, 1, 0, 3, 1], value=-2.5), want)


def test_pad_rejects_negative_pads():
    with pytest.raises(tessera.OpError, match="pad: pads entry 1 .after axis 0. is negative"):
        run_op("pad", [np.zeros(3, np.float32)], pads=[1, -1])


# ---- transpose, reshape, flatten, squeeze, expand_dims ----------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(3))
def test_transpose_with_a_random_perm(rng, dtype, case):
    shape = random_shape(rng, max_rank=4)
    x = random_array(rng, shape, dtype)
    perm = [int(p) for p in rng.permutation(len(shape))]
    assert_same(run_op("transpose", [x], perm=perm), np.transpose(x, perm))
    assert_same(run_op("transpose", [x]), np.transpose(x))  # reversed axes by default


def test_transpose_accepts_negative_axes(rng):
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    assert_same(run_op("transpose", [x], perm=[-1, 0, -2]), np.transpose(x, [2, 0, 1]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_with_and_without_minus_one(rng, dtype):
    x = random_array(rng, (2, 3, 4), dtype)
    for shape in ([4, 6], [-1, 2], [2, -1, 3], [24], [1, 24, 1], [-1]):
        assert_same(run_op("reshape", [x], shape=shape), x.reshape(shape))


def test_reshape_rejects_two_inferred_sizes():
    with pytest.raises(tessera.OpError, match=r"reshape: shape \[-1, -1\] has more than one -1"):
        run_op("reshape", [np.zeros(4, np.float32)], shape=[-1, -1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 1, 4), (1, 2, 3, 2)])
def test_flatten_keeps_the_batch_dimension(rng, dtype, shape):
    x = random_array(rng, shape, dtype)
    assert_same(run_op("flatten", [x]), x.reshape(shape[0], -1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_squeeze_given_axes_and_all(rng, dtype):
    x = random_array(rng, (1, 3, 1, 2, 1), dtype)
    assert_same(run_op("squeeze", [x]), np.squeeze(x))
    assert_same(run_op("squeeze", [x], axes=[0, -1]), np.squeeze(x, axis=(0, 4)))
    assert_same(run_op("squeeze", [x], axes=2), np.squeeze(x, axis=2))


def test_squeeze_rejects_a_dimension_that_is_not_one():
    with pytest.raises(tessera.OpError, match="squeeze: axis 1 has size 3, not 1"):
        run_op("squeeze", [np.zeros((1, 3), np.float32)], axes=[1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_expand_dims_at_every_position(rng, dtype):
    x = random_array(rng, (2, 3), dtype)
    for axis in range(-3, 3):
        assert_same(run_op("expand_dims", [x], axis=axis), np.expand_dims(x, axis))


# ---- tile, repeat ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(3))
def test_tile_like_numpy(rng, dtype, case):
    shape = random_shape(rng, max_rank=3, max_dim=3)
    x = random_array(rng, shape, dtype)
    reps = [int(r) for r in rng.integers(1, 4, size=int(rng.integers(1, 5)))]  # shorter or longer than rank
    assert_same(run_op("tile", [x], reps=reps), np.tile(x, reps))


def test_tile_with_an_integer_count(rng):
    x = rng.normal(size=(2, 3)).astype(np.float32)
    assert_same(run_op("tile", [x], reps=3), np.tile(x, 3))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(3))
def test_repeat_along_a_random_axis(rng, dtype, case):
    shape = random_shape(rng, max_rank=3, max_dim=4)
    x = random_array(rng, shape, dtype)
    axis = int(rng.integers(-len(shape), len(shape)))
    repeats = int(rng.integers(1, 4))
    assert_same(run_op("repeat", [x], repeats=repeats, axis=axis), np.repeat(x, repeats, axis=axis))


def test_repeat_without_an_axis_flattens(rng):
    x = rng.integers(0, 9, size=(2, 3)).astype(np.int32)
    assert_same(run_op("repeat", [x], repeats=2), np.repeat(x, 2))
