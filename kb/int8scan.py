"""An int8 matrix-vector product through onnxruntime (already kb's dependency for the offline embedder): the vector
file's shortlist. numpy has no fast int8 product (it loops); onnxruntime's MatMulInteger runs SIMD kernels. At
179,379 passages x 384 dimensions it took 6.4 ms against the float32 product's 14.5 ms (a quarter of the bytes
read), and the int32 result is exact integer arithmetic: the same on every run, thread count and CPU (see ZERO_POINT).

The model is one MatMulInteger node, written here as protobuf bytes (no `onnx` package needed): the query
(1 x d, uint8, zero point given) times the codes (d x n, int8)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

UINT8, INT8, INT32 = 2, 3, 6  # ONNX TensorProto element types
OPSET = 13  # MatMulInteger exists since opset 10
IR_VERSION = 8
# The query is quantized to -64..64 and stored as v + 64, so no uint8 value exceeds 128. On x86 without AVX-512 VNNI,
# onnxruntime's u8 x s8 kernel (vpmaddubsw) adds each two neighbouring products into a saturating int16: with the
# query at -127..127 (stored as v + 128, up to 255) and codes at +-127, a pair reached 2 x 255 x 127 = 64,770 and was
# cut to 32,767 (on an AMD EPYC with AVX2, 50 of 170,000 rows a query were wrong, some by thousands, and the result
# depended on the CPU). With at most 128 x 127 per product a pair stays within +-32,512: exact on every CPU.
QUERY_LEVELS = 64
ZERO_POINT = QUERY_LEVELS
THREADS = 2

_session: Any = None
_lock = threading.Lock()


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | str | int) -> bytes:
    """One protobuf field: a varint for an int, else length-delimited bytes (a string as UTF-8)."""
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _tensor(name: str, elem_type: int, dims: tuple[int | str, ...]) -> bytes:
    """A ValueInfoProto: a named tensor of `elem_type` and shape `dims` (a number, or a name for a free size)."""
    shape = b"".join(_field(1, _field(1 if isinstance(d, int) else 2, d)) for d in dims)
    tensor_type = _field(1, elem_type) + _field(2, shape)
    return _field(1, name) + _field(2, _field(1, tensor_type))


def model_bytes() -> bytes:
    """ModelProto: graph `y = MatMulInteger(q, m, qz)`, q uint8 (1 x d), m int8 (d x n), qz the zero point."""
    node = _field(1, "q") + _field(1, "m") + _field(1, "qz") + _field(2, "y") + _field(4, "MatMulInteger")
    graph = (
        _field(1, node)
        + _field(2, "kb-int8-scan")
        + _field(11, _tensor("q", UINT8, (1, "d")))
        + _field(11, _tensor("m", INT8, ("d", "n")))
        + _field(11, _tensor("qz", UINT8, ()))
        + _field(12, _tensor("y", INT32, (1, "n")))
    )
    opset = _field(1, "") + _field(2, OPSET)
    return _field(1, IR_VERSION) + _field(7, graph) + _field(8, opset)


def _get_session() -> Any:
    global _session
    with _lock:
        if _session is None:
            import onnxruntime as ort

            opts = ort.SessionOptions()
            opts.intra_op_num_threads = THREADS
            opts.inter_op_num_threads = 1
            # its threads sleep after a run: spinning, they held both cores for a while after every search and the
            # float32 product right after one took 18.9 ms against 10.2 ms (179,379 x 384, this 2-core machine)
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            _session = ort.InferenceSession(model_bytes(), opts, providers=["CPUExecutionProvider"])
        return _session


def quantize_rows(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes (d x n, int8, the transpose the product reads) and per-dimension scales (d, float32) of `vectors`
    (n x d): each dimension scaled so its largest magnitude is 127."""
    peak = np.abs(vectors).max(axis=0) if len(vectors) else np.zeros(vectors.shape[1], dtype=np.float32)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.empty((vectors.shape[1], len(vectors)), dtype=np.int8)
    step = 65536  # in blocks: a float copy of the whole matrix would double the peak memory of a refresh
    for start in range(0, len(vectors), step):
        block = np.asarray(vectors[start : start + step], dtype=np.float32) / scales
        codes[:, start : start + step] = np.clip(np.rint(block), -127, 127).astype(np.int8).T
    return codes, scales


def scores(codes: np.ndarray, scales: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each row's approximate dot product with `query`, as int32 (only their order means anything): the query
    times the scales, quantized to QUERY_LEVELS steps each side of zero, times the codes."""
    weighted = np.asarray(query, dtype=np.float32) * scales
    peak = float(np.abs(weighted).max())
    if peak == 0.0 or codes.shape[1] == 0:
        return np.zeros(codes.shape[1], dtype=np.int32)
    q = (np.rint(weighted * (QUERY_LEVELS / peak)) + ZERO_POINT).astype(np.uint8)[None, :]
    out = _get_session().run(None, {"q": q, "m": codes, "qz": np.array(ZERO_POINT, dtype=np.uint8)})[0]
    return np.asarray(out[0], dtype=np.int32)
