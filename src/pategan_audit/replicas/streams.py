"""Counter-based random streams for many replicas at once: every replica's draws of a training
step come from one vectorised call on the model's device (issue 40, item 2; the replica axis of
:mod:`pategan_audit.implementations.many`, audit paper §6.2's many shadow models).

The generator is Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy
as 1, 2, 3", SC 2011, §4): a keyed bijection of a 128-bit counter, four 32-bit words
``(c0, c1, c2, c3)`` under a 64-bit key ``(k0, k1)``. One round maps

    (c0, c1, c2, c3) -> (hi(M1·c2) ^ c1 ^ k0,  lo(M1·c2),  hi(M0·c0) ^ c3 ^ k1,  lo(M0·c0))

with the paper's multipliers ``M0 = 0xD2511F53``, ``M1 = 0xCD9E8D57``; the key is bumped by the
Weyl constants ``(0x9E3779B9, 0xBB67AE85)`` between rounds; ten rounds. On an accelerator every
word is held in an int64 tensor and a 32 x 32-bit product is formed from the multiplier's two
16-bit halves (two products below 2^48, no overflow), so the arithmetic is exact on any device;
on the CPU the same rounds run in uint64 numpy arrays (exact products, half the operations) a
few replicas at a time, in cache (:class:`Draws`); both give the same words. The known-answer
vectors of the Random123 distribution (``tests/kat_vectors``) are checked in the tests.

Addressing. Replica r has a key from (its seed, the stream id) (:func:`stream_keys`). Element j
of draw d at step s is word ``j mod 4`` of ``Philox(key_r, (j // 4, d, s mod 2^32, s >> 32))``.
A value therefore depends only on the replica's seed, the stream, the step, the draw id and the
element index: the same for any number of replicas, any chunking and any device.

From words: uniforms in [0, 1) are the top 24 bits times 2^-24 (exact float32); normals come from
pairs of words by Box-Muller in float64, rounded to float32 (uniforms, integers and permutations
are bit-identical on every device; a normal can differ by one float32 ulp only where two
devices' float64 ``log``/``cos`` differ at a float32 rounding boundary, about 2^-28 per value);
a permutation orders the positions by one 32-bit word each (ties, about n^2/2^33 per
permutation, broken by position); integers in [0, n) are ``(word · n) >> 32`` (bias at most
n / 2^32 per value); float64 uniforms take 53 bits from a pair of words (the top 27 and 26 bits,
as NumPy's ``random_double``), exponentials are ``-log1p(-u)`` of those (up to 36.7, where the
24-bit uniforms would stop at 16.6: the DP vote noise keeps its tails) and a Laplace value is
the difference of two exponentials (four words), as :func:`pategan_audit.components.votes.laplace`
forms it.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import torch

__all__ = ["MODES", "philox4x32", "stream_keys", "words", "Draws", "uniform_at_least",
           "as_uniform", "as_normal", "as_permutation", "as_integers",
           "as_uniform64", "as_exponential", "as_laplace",
           "uniform", "normal", "permutation", "integers"]

MODES = ("torch", "counter")  # fit_many(streams=...): per-replica torch generators, or these streams

M0, M1 = 0xD2511F53, 0xCD9E8D57  # Philox4x32 multipliers (SC 2011, §4)
W0, W1 = 0x9E3779B9, 0xBB67AE85  # Weyl key increments (golden ratio, sqrt(3) - 1)
MASK = 0xFFFFFFFF
ROUNDS = 10
_KEY_TAG = 0x5EED_C0DE  # separates these keys from every other use of a seed


def _mulhilo(a, m: int):
    """(high, low) 32-bit words of ``a · m`` for words ``a`` (an int64 tensor or a Python int)."""
    if isinstance(a, int):
        p = a * m
        return p >> 32, p & MASK
    p_lo = a * (m & 0xFFFF)  # < 2^48
    p_hi = a * (m >> 16)  # < 2^48
    s = torch.add(p_lo, p_hi & 0xFFFF, alpha=1 << 16)  # < 2^49
    return torch.add(p_hi >> 16, s >> 32), s & MASK


def _mulhilo_(a: torch.Tensor, m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`_mulhilo` of a tensor with fewer allocations (new tensors, ``a`` untouched)."""
    p_hi = a * (m >> 16)
    t = torch.add(a * (m & 0xFFFF), p_hi & 0xFFFF, alpha=1 << 16)
    return p_hi.bitwise_right_shift_(16).add_(t >> 32), t.bitwise_and_(MASK)


def philox4x32(counter: Sequence, key: Sequence, rounds: int = ROUNDS) -> tuple:
    """Philox4x32 of ``counter`` (four words) under ``key`` (two words); words are int64 tensors
    holding values in [0, 2^32) or Python ints, broadcast against each other."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for i in range(rounds):
        if i:
            k0, k1 = (k0 + W0) & MASK, (k1 + W1) & MASK
        hi0, lo0 = _mulhilo(c0, M0)
        hi1, lo1 = _mulhilo(c2, M1)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def stream_keys(seeds: Sequence[int], stream: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """Philox keys ``[R, 2]`` (int64 words) of replicas with ``seeds`` on stream ``stream``: the
    first two 32-bit words of ``SeedSequence([tag, stream, seed])``.

    ``SeedSequence`` reads its entropy as one run of 32-bit words (a seed of 2^32 or more is two
    or more), so the encoding is one-to-one only while ``stream`` is one word: stream
    ``7 + 5·2^32`` with seed 9 and stream 7 with seed ``5 + 9·2^32`` are both the words
    ``(tag, 7, 5, 9)``, the same key. Streams are therefore ids in [0, 2^32)."""
    if isinstance(stream, bool) or not isinstance(stream, (int, np.integer)) or not 0 <= int(stream) <= MASK:
        raise ValueError(f"stream must be an integer in [0, 2^32) (one 32-bit word of the key's entropy), got {stream!r}")
    rows = []
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or int(s) < 0:
            raise ValueError(f"counter streams need non-negative integer seeds, got {s!r}")
        rows.append(np.random.SeedSequence([_KEY_TAG, int(stream), int(s)]).generate_state(2, np.uint32))
    return torch.as_tensor(np.asarray(rows, dtype=np.int64).reshape(-1, 2), device=device)


def _check_step(step: int) -> int:
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or not 0 <= int(step) < 1 << 64:
        raise ValueError(f"step must be an integer in [0, 2^64), got {step!r}")
    return int(step)


class Draws:
    """Several draws of one step from one Philox evaluation over ``[R, blocks]``.

    keys: ``[R, 2]`` from :func:`stream_keys`; sizes: draw id -> number of 32-bit words. The
    counters and round keys are laid out once; ``draws(step)`` returns {draw id: words ``[R, n]``}
    (int64 in [0, 2^32), on the keys' device), the same words as :func:`words` gives for each
    draw alone. backend: "torch" (int64 tensor ops on the device, 16-bit split products) or
    "numpy" (uint64 arrays, whose 32 x 32-bit products are exact: half the ops, and a fifth of
    torch's cost per op on small arrays; CPU only); None: numpy on the CPU, torch elsewhere. Both
    give the same words (tests/replicas/test_streams.py)."""

    def __init__(self, keys: torch.Tensor, sizes: Mapping[int, int], *, backend: str | None = None):
        if keys.dim() != 2 or keys.shape[1] != 2:
            raise ValueError(f"keys must be [R, 2] (from stream_keys), got shape {tuple(keys.shape)}")
        backend = backend or ("numpy" if keys.device.type == "cpu" else "torch")
        if backend not in ("torch", "numpy") or (backend == "numpy" and keys.device.type != "cpu"):
            raise ValueError(f"backend must be 'torch', or 'numpy' for keys on the CPU; got {backend!r} on {keys.device}")
        self.backend = backend
        bad = [d for d, n in sizes.items() if not 0 <= int(d) <= MASK or not 0 <= int(n) <= 4 * (MASK + 1)]
        if bad:  # a draw's block index is the counter's first word: at most 2^32 blocks of 4 words
            raise ValueError(f"draw ids must lie in [0, 2^32) and sizes in [0, 2^34]; bad draw {bad[0]!r}")
        self.sizes = {int(d): int(n) for d, n in sizes.items()}
        dev = keys.device
        c0, c1, self.spans, start = [], [], {}, 0
        for d, n in self.sizes.items():
            nb = -(-n // 4)
            c0.append(torch.arange(nb, dtype=torch.int64, device=dev))
            c1.append(torch.full((nb,), d, dtype=torch.int64, device=dev))
            self.spans[d] = (4 * start, 4 * start + n)
            start += nb
        self.c0 = torch.cat(c0) if c0 else torch.zeros(0, dtype=torch.int64, device=dev)
        self.c1 = torch.cat(c1) if c1 else torch.zeros(0, dtype=torch.int64, device=dev)
        # the round keys (k0, k1), [R, 1] each, bumped once here rather than in every call
        self.round_keys = [((keys[:, 0:1] + i * W0) & MASK, (keys[:, 1:2] + i * W1) & MASK) for i in range(ROUNDS)]
        if backend == "numpy":
            self.np_c0, self.np_c1 = self.c0.numpy().astype(np.uint64), self.c1.numpy().astype(np.uint64)
            self.np_keys = [(a.numpy().astype(np.uint64), b.numpy().astype(np.uint64)) for a, b in self.round_keys]

    def __call__(self, step: int) -> dict[int, torch.Tensor]:
        """:func:`philox4x32` at counters ``(block, draw, step lo, step hi)``, with each round's
        ops in place where the shapes allow (the first round runs on ``[blocks]``, R-free)."""
        s = _check_step(step)
        if self.backend == "numpy":
            return self._numpy(s)
        c0, c1 = self.c0, self.c1
        c2, c3 = torch.full_like(c0, s & MASK), torch.full_like(c0, s >> 32)
        for i, (k0, k1) in enumerate(self.round_keys):
            hi0, lo0 = _mulhilo_(c0, M0)
            hi1, lo1 = _mulhilo_(c2, M1)
            if i:  # [R, blocks] from the second round on: xor in place
                c0, c2 = hi1.bitwise_xor_(c1).bitwise_xor_(k0), hi0.bitwise_xor_(c3).bitwise_xor_(k1)
            else:
                c0, c2 = hi1 ^ c1 ^ k0, hi0 ^ c3 ^ k1
            c1, c3 = lo1, lo0
        out = torch.stack(torch.broadcast_tensors(c0, c1, c2, c3), dim=-1)  # [R, blocks, 4]
        flat = out.reshape(out.shape[0], -1)
        return {d: flat[:, a:b] for d, (a, b) in self.spans.items()}

    def _numpy(self, s: int, blocks: int = 1 << 14) -> dict[int, torch.Tensor]:
        """The rounds in uint64 arrays, a few replicas at a time (about ``blocks`` counters per
        pass: 128 KiB arrays that stay in cache, three to four times faster than one pass)."""
        m0, m1, mask, sh = np.uint64(M0), np.uint64(M1), np.uint64(MASK), np.uint64(32)
        R, nb = self.np_keys[0][0].shape[0], self.np_c0.shape[0]
        out = np.empty((R, nb, 4), dtype=np.int64)
        step = max(1, blocks // max(nb, 1))
        for a in range(0, R, step):
            c0, c1 = self.np_c0, self.np_c1
            c2, c3 = np.full_like(c0, s & MASK), np.full_like(c0, s >> 32)
            for k0, k1 in self.np_keys:
                k0, k1 = k0[a:a + step], k1[a:a + step]
                p0, p1 = c0 * m0, c2 * m1  # < 2^64: exact in uint64
                c0, c1, c2, c3 = (p1 >> sh) ^ c1 ^ k0, p1 & mask, (p0 >> sh) ^ c3 ^ k1, p0 & mask
            part = out[a:a + step]
            for j, c in enumerate((c0, c1, c2, c3)):
                part[..., j] = c
        flat = torch.from_numpy(out.reshape(R, -1))
        return {d: flat[:, a:b] for d, (a, b) in self.spans.items()}


def words(keys: torch.Tensor, step: int, n: int, *, draw: int = 0, backend: str | None = None) -> torch.Tensor:
    """``n`` 32-bit words ``[R, n]`` (int64) of draw ``draw`` at ``step`` for each replica's key."""
    return Draws(keys, {draw: n}, backend=backend)(step)[draw]


def as_uniform(w: torch.Tensor) -> torch.Tensor:
    """Uniforms in [0, 1), float32: the top 24 bits of each word times 2^-24 (exact)."""
    return (w >> 8).to(torch.float32).mul_(1.0 / (1 << 24))  # in place: a third less memory traffic, same values


def uniform_at_least(w: torch.Tensor, p: float) -> torch.Tensor:
    """``as_uniform(w) >= p`` (bool), compared in integers: the uniform is ``(w >> 8) 2^-24`` exactly
    and torch compares a float32 tensor with ``p`` rounded to float32, so the test is
    ``(w >> 8) >= ceil(float32(p) 2^24)``, the same booleans without converting the words."""
    return (w >> 8) >= math.ceil(float(np.float32(p)) * (1 << 24))


def as_normal(w: torch.Tensor) -> torch.Tensor:
    """Standard normals, one per word (the last axis even): Box-Muller on the pairs
    ``(w[2i], w[2i+1])``, u1 = (top 24 bits + 1) 2^-24 in (0, 1], in float64 rounded to float32."""
    if w.shape[-1] % 2:
        raise ValueError(f"as_normal needs an even number of words on the last axis, got {w.shape[-1]}")
    pairs = (w >> 8).to(torch.float64).unflatten(-1, (-1, 2))
    u1 = (pairs[..., 0] + 1.0) * (1.0 / (1 << 24))
    theta = pairs[..., 1] * (2.0 * math.pi / (1 << 24))
    r = torch.sqrt(-2.0 * torch.log(u1))
    return torch.stack([r * torch.cos(theta), r * torch.sin(theta)], dim=-1).flatten(-2).to(torch.float32)


def as_permutation(w: torch.Tensor, lengths: torch.Tensor | None = None, first: int | None = None) -> torch.Tensor:
    """A random permutation of the last axis' positions per row: positions ordered by their
    words, ties broken by position (the sort key ``word · n + position`` is distinct, so the
    order is unique on every device). ``lengths`` (broadcast against ``w.shape[:-1]``):
    positions at or past a row's length sort last, so the first ``length`` entries permute
    ``range(length)``. ``first``: only the first entries of each permutation (a partial sort)."""
    n = w.shape[-1]
    pos = torch.arange(n, device=w.device)
    if lengths is not None:
        w = torch.where(pos >= lengths[..., None], w.new_full((), 1 << 32), w)
    key = w * n + pos  # < 2^63 for n < 2^31
    if first is None:
        return torch.sort(key, dim=-1).indices
    return torch.topk(key, min(int(first), n), dim=-1, largest=False, sorted=True).indices


def as_integers(w: torch.Tensor, n: torch.Tensor | int) -> torch.Tensor:
    """Integers in [0, n) per word: ``(word · n) >> 32``; ``n`` in [1, 2^31], broadcast
    against ``w`` (e.g. ``[R, 1]`` for one range per replica)."""
    n_t = torch.as_tensor(n, dtype=torch.int64, device=w.device)
    if bool(((n_t < 1) | (n_t > 1 << 31)).any()):
        raise ValueError(f"integer ranges must lie in [1, 2^31], got {n!r}")
    return (w * n_t) >> 32


def as_uniform64(w: torch.Tensor) -> torch.Tensor:
    """Uniforms in [0, 1), float64, one per pair of words ``(w[2i], w[2i+1])`` (the last axis
    even): ``((w[2i] >> 5) · 2^26 + (w[2i+1] >> 6)) · 2^-53``, every value a multiple of 2^-53."""
    if w.shape[-1] % 2:
        raise ValueError(f"as_uniform64 needs an even number of words on the last axis, got {w.shape[-1]}")
    pairs = w.unflatten(-1, (-1, 2))
    return ((pairs[..., 0] >> 5) * (1 << 26) + (pairs[..., 1] >> 6)).to(torch.float64) * 2.0 ** -53


def as_exponential(w: torch.Tensor) -> torch.Tensor:
    """Exp(1) values, float64, one per pair of words: ``-log1p(-u)`` of :func:`as_uniform64`."""
    return -torch.log1p(-as_uniform64(w))


def as_laplace(w: torch.Tensor, scale: float) -> torch.Tensor:
    """Laplace(0, ``scale``) values, float64, one per four words (the last axis a multiple of 4):
    ``scale · (E1 − E2)`` with E1 from words ``4i, 4i+1`` and E2 from ``4i+2, 4i+3``."""
    if w.shape[-1] % 4:
        raise ValueError(f"as_laplace needs a multiple of 4 words on the last axis, got {w.shape[-1]}")
    if not scale > 0:
        raise ValueError(f"the Laplace scale must be > 0, got {scale}")
    e = as_exponential(w).unflatten(-1, (-1, 2))
    return scale * (e[..., 0] - e[..., 1])


def _count(shape: Sequence[int]) -> int:
    return int(np.prod(tuple(shape), dtype=np.int64))


def uniform(keys: torch.Tensor, step: int, shape: Sequence[int], *, draw: int = 0) -> torch.Tensor:
    """Uniforms ``[R, *shape]`` in [0, 1), float32, on the keys' device."""
    return as_uniform(words(keys, step, _count(shape), draw=draw)).reshape(keys.shape[0], *shape)


def normal(keys: torch.Tensor, step: int, shape: Sequence[int], *, draw: int = 0) -> torch.Tensor:
    """Standard normals ``[R, *shape]`` (float32); an odd count draws one spare value."""
    n = _count(shape)
    return as_normal(words(keys, step, n + n % 2, draw=draw))[:, :n].reshape(keys.shape[0], *shape)


def permutation(keys: torch.Tensor, step: int, n: int, *, draw: int = 0) -> torch.Tensor:
    """A random permutation of ``range(n)`` per replica, ``[R, n]`` int64."""
    return as_permutation(words(keys, step, int(n), draw=draw))


def integers(keys: torch.Tensor, step: int, n: torch.Tensor | Sequence[int] | int, shape: Sequence[int], *,
             draw: int = 0) -> torch.Tensor:
    """Integers ``[R, *shape]`` with replica r's in [0, n_r) (``n``: one int or one per replica)."""
    n_t = torch.as_tensor(n, dtype=torch.int64, device=keys.device).reshape(-1, *([1] * len(shape)))
    if n_t.shape[0] not in (1, keys.shape[0]):
        raise ValueError(f"n holds {n_t.shape[0]} ranges for {keys.shape[0]} replicas; pass one int or one per replica")
    w = words(keys, step, _count(shape), draw=draw).reshape(keys.shape[0], *shape)
    return as_integers(w, n_t)
