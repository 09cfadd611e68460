"""Dropout in training mode: the random stream EGG's kernels draw from, and the same draws in
PyTorch for their references.

A kernel with dropout takes one more input, ``egg_rng``: an int64 tensor ``[seed, offset]``.  The
k-th dropout call of a forward (in call order: its ``stream``) keeps element ``n`` of its
contiguous output when word ``n & 3`` of Philox4x32-10 (Salmon et al., SC'11) at

    counter = [(n >> 2) mod 2^32, (n >> 2) >> 32, offset mod 2^32, offset >> 32]
    key     = [seed mod 2^32, (seed >> 32) + stream mod 2^32]

has its top 24 bits below ``keep_threshold(p)``; a kept element is ``x * scale(p)``, a dropped one
0.  ``templates/elementwise/ops.cuh`` (``egg_dropout``) computes the same integers, so a kernel
and ``philox_dropout`` agree bit for bit.  The masks are not PyTorch's own (its bits depend on its
kernel's launch shape); their distribution is: each element kept with probability 1 - p, within
2^-24.

``F.scaled_dot_product_attention`` with ``dropout_p`` > 0 (what nn.MultiheadAttention and
nn.TransformerEncoderLayer run in training mode) is computed as PyTorch's math reference does,
its weights' dropout one more ``F.dropout`` call.  While a model is captured, ``F.dropout`` in
training mode with p > 0 becomes the custom op
``egg::dropout(x, p, stream)`` (``capturing()``); while its references are computed it becomes
``philox_dropout`` at the set's ``[seed, offset]`` (``drawing()``).  Both count calls the same way,
so the k-th call of the traced graph and of the reference run are the same stream.
"""

import contextlib
import math

import torch
import torch.nn.functional as F

INPUT = "egg_rng"  # the spec input (kind "rng") every dropout node reads
_M32 = 0xFFFFFFFF
_MUL = (0xD2511F53, 0xCD9E8D57)
_WEYL = (0x9E3779B9, 0xBB67AE85)
_CHUNK = 1 << 22  # elements per pass of philox_dropout (bounds its int64 temporaries)
_ORIGINAL = F.dropout
_ORIGINAL_SDPA = F.scaled_dot_product_attention


def keep_threshold(p):
    """Elements whose 24-bit draw is below this are kept: round((1 - p) * 2^24)."""
    return int(round((1.0 - float(p)) * (1 << 24)))


def scale(p):
    """The factor a kept element is multiplied by, as the float32 the kernel uses (0 at p = 1)."""
    return 0.0 if float(p) >= 1.0 else float(torch.tensor(1.0 / (1.0 - float(p)),
                                                          dtype=torch.float32))


def _mulhilo(a, m):
    """(hi, lo) 32-bit words of a * m for int64 tensors a < 2^32 and a constant m < 2^32, in int64
    arithmetic that never overflows (16-bit halves)."""
    m_hi, m_lo = m >> 16, m & 0xFFFF
    a_hi, a_lo = a >> 16, a & 0xFFFF
    low = a_lo * m_lo
    mid = a_hi * m_lo + a_lo * m_hi  # < 2^33
    lo_full = low + ((mid & 0xFFFF) << 16)  # < 2^34
    hi = (a_hi * m_hi + (mid >> 16) + (lo_full >> 32)) & _M32
    return hi, lo_full & _M32


def philox4x32_10(ctr, key):
    """The four 32-bit output words of Philox4x32-10 for int64 tensors (or ints) ctr[0..3] and
    ints key[0..1], each below 2^32."""
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + _WEYL[0]) & _M32, (k1 + _WEYL[1]) & _M32
        hi0, lo0 = _mulhilo(c0, _MUL[0])
        hi1, lo1 = _mulhilo(c2, _MUL[1])
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def keep_mask(numel, p, seed, offset, stream, device):
    """The bool keep mask of ``numel`` contiguous elements of dropout call ``stream``."""
    key = (seed & _M32, ((seed >> 32) + stream) & _M32)
    threshold = keep_threshold(p)
    parts = []
    for start in range(0, numel, _CHUNK):
        n = torch.arange(start, min(numel, start + _CHUNK), dtype=torch.int64, device=device)
        c = n >> 2
        words = philox4x32_10((c & _M32, c >> 32, torch.full_like(c, offset & _M32),
                               torch.full_like(c, (offset >> 32) & _M32)), key)
        word = torch.stack(words).gather(0, (n & 3).unsqueeze(0)).squeeze(0)
        parts.append((word >> 8) < threshold)
    return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.bool, device=device)


def philox_dropout(x, p, seed, offset, stream):
    """What EGG's kernel computes for ``F.dropout(x, p, training=True)``: x * scale where kept."""
    keep = keep_mask(x.numel(), p, seed, offset, stream, x.device).view(x.shape)
    kept = x * torch.tensor(scale(p), dtype=x.dtype, device=x.device)
    return torch.where(keep, kept, torch.zeros((), dtype=x.dtype, device=x.device))


def state(k, device):
    """Input set k's ``egg_rng`` tensor: [seed, offset], different for every set."""
    seed = ((k + 1) * 0x9E3779B97F4A7C15) & ((1 << 63) - 1)
    return torch.tensor([seed, k], dtype=torch.int64, device=device)


def _draws(training, p):
    return training and float(p) > 0.0


@torch.library.custom_op("egg::dropout", mutates_args=())
def _dropout_op(input: torch.Tensor, p: float, stream: int) -> torch.Tensor:
    return _ORIGINAL(input, p, True)


@_dropout_op.register_fake
def _(input, p, stream):
    return torch.empty_like(input)


@contextlib.contextmanager
def _patched(draw):
    """F.dropout calls ``draw(x, p, stream)`` for each call that draws (stream = calls so far;
    ``inplace=True`` copies the result into x, as PyTorch's does); the others keep PyTorch's own."""
    calls = [0]

    def dropout(input, p=0.5, training=True, inplace=False):
        if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0 or not _draws(training, p):
            return _ORIGINAL(input, p, training, inplace)  # PyTorch's own (and its errors)
        calls[0] += 1
        out = draw(input, float(p), calls[0] - 1)
        return input.copy_(out) if inplace else out
    def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                  enable_gqa=False):
        if not isinstance(dropout_p, (int, float)) or not 0.0 < dropout_p <= 1.0:
            return _ORIGINAL_SDPA(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                  is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
        return _attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale,
                               enable_gqa, dropout)
    F.dropout = dropout
    F.scaled_dot_product_attention = attention
    try:
        yield
    finally:
        F.dropout = _ORIGINAL
        F.scaled_dot_product_attention = _ORIGINAL_SDPA


def _attention_math(q, k, v, attn_mask, p, is_causal, scale, enable_gqa, dropout):
    """scaled_dot_product_attention with dropout_p > 0 as PyTorch's math reference computes it
    (softmax(q k^T * scale + bias), dropout on the weights, times v), its dropout through
    ``dropout`` so it is one more numbered call of the stream (nn.MultiheadAttention and
    nn.TransformerEncoderLayer in training mode pass their dropout here)."""
    L, S = q.size(-2), k.size(-2)
    factor = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    if enable_gqa:
        k = k.repeat_interleave(q.size(-3) // k.size(-3), -3)
        v = v.repeat_interleave(q.size(-3) // v.size(-3), -3)
    scores = torch.matmul(q, k.transpose(-2, -1)) * factor
    if is_causal:
        keep = torch.ones(L, S, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        scores = (scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool
                  else scores + attn_mask)
    weights = dropout(torch.softmax(scores, dim=-1), p, True)
    return torch.matmul(weights, v)


def capturing():
    """While a model is captured: each drawing F.dropout is the node egg::dropout(x, p, stream)."""
    return _patched(lambda x, p, stream: torch.ops.egg.dropout(x, p, stream))


def drawing(rng):
    """While references are computed: each drawing F.dropout is ``philox_dropout`` at ``rng``
    ([seed, offset], a tensor or a pair)."""
    seed, offset = (int(v) for v in (rng.tolist() if isinstance(rng, torch.Tensor) else rng))
    return _patched(lambda x, p, stream: philox_dropout(x, p, seed, offset, stream))
