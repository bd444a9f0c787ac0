"""Gradients, conditionals, the learning phase's switches, and loops over a known number of steps
(rnn, map_fn, foldl, foldr), unrolled into the graph."""
import numpy as np

from ... import graph
from ...graph import Tensor
from ._core import _static_value, int_shape, learning_phase, zeros_like
from ._math import expand_dims, stack

__all__ = [
    "gradients", "switch", "in_train_phase", "in_test_phase", "rnn", "map_fn", "foldl", "foldr",
    "ctc_label_dense_to_sparse", "ctc_batch_cost", "ctc_decode",
]


def gradients(loss, variables):
    variables = list(variables)
    if not variables:
        return []
    return graph.gradients(loss, variables)


def switch(condition, then_expression, else_expression):
    """then_expression where condition holds, else else_expression (each may be a callable).
    A scalar condition picks a whole branch; a condition of lower rank than the branches picks
    along their leading axes."""
    if isinstance(condition, (bool, int, np.bool_, np.integer)):
        branch = then_expression if condition else else_expression
        return branch() if callable(branch) else branch
    then_value = then_expression() if callable(then_expression) else then_expression
    else_value = else_expression() if callable(else_expression) else else_expression
    condition = graph.as_tensor(condition)
    if condition.dtype != "bool":
        condition = graph.intrinsic("cmp_ne", condition, 0)
    then_value, else_value = graph.as_tensor(then_value), graph.as_tensor(else_value)
    cond_rank, expr_rank = len(condition.shape), len(then_value.shape)
    if cond_rank > expr_rank:
        raise ValueError(f"Rank of `condition` should be less than or equal to rank of "
                         f"`then_expression` and `else_expression`. ndim(condition)={cond_rank}, "
                         f"ndim(then_expression)={expr_rank}")
    if cond_rank and cond_rank < expr_rank:
        # Align the condition with the branches' leading axes.
        for _ in range(expr_rank - cond_rank):
            condition = expand_dims(condition, -1)
    if cond_rank == 0 and then_value.shape != else_value.shape:
        known = all(d is not None for d in then_value.shape + else_value.shape)
        if known and then_value.shape != else_value.shape and \
                np.broadcast_shapes(then_value.shape, else_value.shape) != then_value.shape:
            raise ValueError(f"switch: a condition known only at run time needs branches of one "
                             f"shape; got {then_value.shape} and {else_value.shape}")
    out = graph.intrinsic("cond", condition, then_value, else_value)
    if getattr(then_value, "_uses_learning_phase", False) or \
            getattr(else_value, "_uses_learning_phase", False):
        out._uses_learning_phase = True
    return out


def in_train_phase(x, alt, training=None):
    uses_learning_phase = training is None
    if training is None:
        training = learning_phase()
    if not isinstance(training, Tensor):  # a Python 0/1 or bool picks the branch now
        branch = x if training else alt
        return branch() if callable(branch) else branch
    out = switch(training, x, alt)
    if uses_learning_phase:
        out._uses_learning_phase = True
    return out


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


def _steps(x, what, given=None):
    shape = int_shape(x) if hasattr(x, "_keras_shape") else graph.as_tensor(x).shape
    n = shape[1] if what == "rnn" else shape[0]
    n = n if n is not None else given
    if n is None:
        raise ValueError(f"{what}: the number of steps must be known when the graph is built "
                         "(Tessera unrolls the loop); give the input a static time dimension")
    return int(n)


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None,
        unroll=False, input_length=None):
    """Runs step_function over the time axis (1) of inputs, unrolled into the graph. Returns
    (last output, outputs stacked on axis 1, last states), as Keras expects. Where mask is 0 a
    step keeps the previous output and states."""
    inputs = graph.as_tensor(inputs)
    if len(inputs.shape) < 3:
        raise ValueError("Input should be at least 3D.")
    constants = list(constants or [])
    states = list(initial_states)
    if inputs.shape[1] is None and input_length is None:
        # Sequences of any length: unrolled when a function is compiled for a length. The first
        # step is taken once outside, as TensorFlow's backend does: cells create what they keep
        # across steps (dropout masks) then, from graph tensors rather than a build's values.
        step_function(inputs[:, 0], states + constants)
        n, has_mask = len(states), mask is not None
        pieces = [inputs] + ([mask] if has_mask else []) + states + constants

        def build(x, *rest):
            m, rest = (rest[0], rest[1:]) if has_mask else (None, rest)
            last, outs, new = rnn(step_function, x, list(rest[:n]), go_backwards, m,
                                  list(rest[n:]))
            return [last, outs] + list(new)

        last, outs, *new = graph.deferred(build, pieces)
        if getattr(inputs, "_uses_learning_phase", False):
            last._uses_learning_phase = outs._uses_learning_phase = True
        return last, outs, new
    steps = _steps(inputs, "rnn", input_length)
    if mask is not None:
        mask = graph.as_tensor(mask)
        if mask.dtype != "bool":
            mask = graph.intrinsic("cmp_ne", mask, 0)
        if len(mask.shape) == 3:
            mask = mask[:, :, 0]
    order = range(steps - 1, -1, -1) if go_backwards else range(steps)
    outputs, uses_learning_phase = [], False

    def masked(keep, new, old):
        keep = graph.as_tensor(keep)
        for _ in range(len(new.shape) - 1):
            keep = expand_dims(keep, -1)
        return graph.intrinsic("cond", keep, new, old)

    for t in order:
        output, new_states = step_function(inputs[:, t], states + constants)
        output = graph.as_tensor(output)
        new_states = list(new_states)
        uses_learning_phase |= bool(getattr(output, "_uses_learning_phase", False))
        if mask is not None:
            keep = mask[:, t]
            previous = outputs[-1] if outputs else zeros_like(output)
            output = masked(keep, output, previous)
            new_states = [masked(keep, new, old) for new, old in zip(new_states, states)]
        outputs.append(output)
        states = new_states
    last_output = outputs[-1]
    stacked = stack(outputs, axis=1)
    if uses_learning_phase:
        last_output._uses_learning_phase = True
        stacked._uses_learning_phase = True
    return last_output, stacked, states


def _elements(elems):
    """The elements of elems along axis 0: its values when known before any run (so that a
    function may index with them), else its slices."""
    n = _steps(elems, "map_fn")
    value = _static_value(elems)
    if value is not None:
        return [value[i] for i in range(n)]
    elems = graph.as_tensor(elems)
    return [elems[i] for i in range(n)]


def map_fn(fn, elems, name=None, dtype=None):
    out = stack([graph.as_tensor(fn(e)) for e in _elements(elems)], axis=0)
    return graph.cast(out, dtype) if dtype is not None else out


def foldl(fn, elems, initializer=None, name=None):
    items = _elements(elems)
    acc, items = (items[0], items[1:]) if initializer is None else (initializer, items)
    for x in items:
        acc = fn(acc, x)
    return graph.as_tensor(acc)


def foldr(fn, elems, initializer=None, name=None):
    items = _elements(elems)[::-1]
    acc, items = (items[0], items[1:]) if initializer is None else (initializer, items)
    for x in items:
        acc = fn(acc, x)
    return graph.as_tensor(acc)


def ctc_label_dense_to_sparse(labels, label_lengths):
    raise NotImplementedError("ctc_label_dense_to_sparse: Tessera has no sparse tensors, and the "
                              "result's size depends on the label lengths' values")


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    raise NotImplementedError("ctc_batch_cost is not implemented by the Tessera backend: the CTC "
                              "loss needs a per-sample dynamic-length recursion the graph API "
                              "cannot express yet")


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    raise NotImplementedError("ctc_decode is not implemented by the Tessera backend: its results "
                              "are sparse with sizes that depend on the values decoded")
