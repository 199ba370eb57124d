"""The int8 product behind the vector file's shortlist (kb.int8scan): a model onnxruntime loads from bytes written
here, an order that follows the float product, and exact integer results."""

from __future__ import annotations

import numpy as np
import pytest

from kb import int8scan


def unit_rows(n: int, dims: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, dims)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_codes_are_the_transposed_rows_scaled_per_dimension() -> None:
    vecs = np.array([[0.5, -0.1], [-0.25, 0.1], [0.0, 0.05]], dtype=np.float32)
    codes, scales = int8scan.quantize_rows(vecs)
    assert codes.dtype == np.int8 and codes.shape == (2, 3) and scales.shape == (2,)
    assert scales == pytest.approx([0.5 / 127, 0.1 / 127])
    assert codes.tolist() == [[127, -64, 0], [-127, 127, 64]]
    zero = int8scan.quantize_rows(np.zeros((2, 3), dtype=np.float32))
    assert zero[0].tolist() == [[0, 0]] * 3 and zero[1].tolist() == [1.0] * 3  # no division by zero


def test_scores_are_the_integer_product_and_order_rows_as_the_float_product() -> None:
    vecs = unit_rows(2000, 64, seed=1)
    codes, scales = int8scan.quantize_rows(vecs)
    query = unit_rows(1, 64, seed=2)[0]
    got = int8scan.scores(codes, scales, query)
    weighted = query * scales
    q = np.rint(weighted * (int8scan.QUERY_LEVELS / np.abs(weighted).max())).astype(np.int64)
    assert got.dtype == np.int32 and got.tolist() == (q @ codes.astype(np.int64)).tolist()  # exact integers
    exact = vecs @ query
    assert np.corrcoef(got, exact)[0, 1] > 0.999
    top = set(np.argsort(-exact)[:20].tolist())
    assert top <= set(np.argsort(-got)[:40].tolist())  # the shortlist's margin: twice as many rows hold the top
    assert int8scan.scores(codes, scales, np.zeros(64, dtype=np.float32)).tolist() == [0] * 2000


def test_the_model_bytes_are_a_valid_one_node_model() -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(int8scan.model_bytes(), providers=["CPUExecutionProvider"])
    assert [(i.name, i.type) for i in session.get_inputs()] == [
        ("q", "tensor(uint8)"),
        ("m", "tensor(int8)"),
        ("qz", "tensor(uint8)"),
    ]
    assert [(o.name, o.type, o.shape) for o in session.get_outputs()] == [("y", "tensor(int32)", [1, "n"])]


def test_the_product_is_exact_where_a_saturating_int16_pair_would_overflow() -> None:
    """Every query byte and code at its largest, so each two neighbouring products are as large as they get: on x86
    without AVX-512 VNNI onnxruntime adds such a pair into a saturating int16, and a query stored up to 255 came back
    wrong (a pair of 2 x 255 x 127). Stored up to 128, the pair fits and the product is exact on every CPU."""
    d = 64
    vecs = np.full((3, d), 1 / np.sqrt(d), dtype=np.float32)
    vecs[1] *= -1
    vecs[2, ::2] *= -1
    codes, scales = int8scan.quantize_rows(vecs)
    assert np.abs(codes).min() == 127
    got = int8scan.scores(codes, scales, np.full(d, 1 / np.sqrt(d), dtype=np.float32))
    top = int8scan.QUERY_LEVELS * 127 * d
    assert got.tolist() == [top, -top, 0]
    assert 2 * (int8scan.ZERO_POINT + int8scan.QUERY_LEVELS) * 127 <= 2**15 - 1  # the pair bound itself
