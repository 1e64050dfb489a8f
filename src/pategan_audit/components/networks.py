"""Neural building blocks of the PATE-GAN presets (audit paper Table 3; implementation notes §common.table3 and the ``.architecture`` section of each implementation).

The central piece is :class:`BatchedLinear`: ``k`` independent dense layers stored as one weight
tensor ``[k, in, out]`` and applied with a single batched matrix product. A teacher ensemble is a
:class:`BatchedMLP` with ``num_models = k``: one forward and one backward pass train all teachers
(design.md §4, "never a Python loop over teachers"). Because the loss of the ensemble is the *sum*
of the teachers' losses, each teacher's gradient is exactly the gradient of its own loss, and
element-wise optimisers (Adam, RMSProp) update each teacher exactly as a separate optimiser would.
Single networks (generator, student) are the same class with ``num_models = 1``.

Initialisations (implementation notes §original.architecture, §updated.architecture, §synthcity.architecture, §borealis.architecture, §smartnoise.architecture):

* ``"he_normal"``: ``N(0, 2/fan_in)``, bias 0; the TF "xavier_init" of original/updated/turing,
  which is He-normal despite its name.
* ``"xavier_uniform"``: ``U(±sqrt(6/(fan_in+fan_out)))`` (borealis, smartnoise).
* ``"torch_default"``: PyTorch's ``nn.Linear`` default, ``U(±1/sqrt(fan_in))`` for weight and bias
  (synthcity).

``bias_init`` is a number (borealis: 0.01), ``"zero"`` or ``"torch_default"`` (smartnoise keeps
PyTorch's default bias). Every random draw takes a ``torch.Generator`` so that a seed fixes the
network exactly.
"""
from __future__ import annotations

import math
import warnings
from typing import Sequence

import torch
from torch import nn

__all__ = [
    "WEIGHT_INITS",
    "activation",
    "BatchedLinear",
    "BatchedMLP",
    "Mlp",
    "dropout",
    "adam",
]

WEIGHT_INITS = ("he_normal", "xavier_uniform", "torch_default")


def activation(name: str) -> nn.Module:
    """Activation module by name: ``relu``, ``tanh``, ``sigmoid``, ``identity``,
    ``leaky_relu:<slope>`` (e.g. ``leaky_relu:0.2`` for smartnoise, ``leaky_relu:0.01`` for synthcity)."""
    if name == "relu":
        return nn.ReLU()
    if name == "tanh":
        return nn.Tanh()
    if name == "sigmoid":
        return nn.Sigmoid()
    if name in ("identity", "none", "linear"):
        return nn.Identity()
    if name.startswith("leaky_relu"):
        slope = float(name.split(":", 1)[1]) if ":" in name else 0.01
        return nn.LeakyReLU(slope)
    raise ValueError(f"unknown activation {name!r}; use relu, tanh, sigmoid, identity or leaky_relu:<slope>")


class _FusedAdam(torch.optim.Adam):
    """The fused Adam, guarded: in torch 2.13 the fused CPU kernel silently mis-updates a
    parameter whose gradient is not contiguous (e.g. a transposed gradient from
    ``torch.autograd.grad``: a 0.2 error after one step at lr 0.1, where the default kernel is
    right), so such gradients are made contiguous before the step."""

    def step(self, closure=None):  # noqa: D401 - torch API
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and not p.grad.is_contiguous():
                    p.grad = p.grad.contiguous()
        return super().step(closure)


def adam(params, *, lr: float, betas: tuple[float, float] = (0.9, 0.999), weight_decay: float = 0.0) -> torch.optim.Adam:
    """``torch.optim.Adam`` with the fused CPU kernel (same update rule; about 3x less overhead
    per step than the default for these tiny networks; guarded against non-contiguous
    gradients, :class:`_FusedAdam`), falling back to the default kernel."""
    params = list(params)
    try:
        return _FusedAdam(params, lr=lr, betas=betas, weight_decay=weight_decay, fused=True)
    except (RuntimeError, TypeError, ValueError):  # pragma: no cover - older torch / unsupported dtype
        return torch.optim.Adam(params, lr=lr, betas=betas, weight_decay=weight_decay)


def dropout(x: torch.Tensor, *, p: float, generator: torch.Generator | None, training: bool) -> torch.Tensor:
    """Inverted dropout with an explicit generator (``torch.nn.Dropout`` cannot take one)."""
    if not training or p <= 0.0:
        return x
    keep = torch.rand(x.shape, generator=generator, dtype=x.dtype) >= p
    return x * keep / (1.0 - p)


class BatchedLinear(nn.Module):
    """``k`` independent affine maps ``x @ W_t + b_t``; weight ``[k, in, out]``, bias ``[k, 1, out]``.

    forward: ``x`` of shape ``[k, n, in]`` (one input set per model) or ``[n, in]`` (every model
    reads the same rows, as teachers voting on one generated batch) -> ``[k, n, out]``.
    """

    def __init__(
        self,
        num_models: int,
        in_features: int,
        out_features: int,
        *,
        bias: bool = True,
        weight_init: str = "torch_default",
        bias_init: float | str = "torch_default",
        generator: torch.Generator | None = None,
        dtype: torch.dtype = torch.float32,
    ):
        super().__init__()
        if num_models < 1 or in_features < 1 or out_features < 1:
            raise ValueError(
                f"BatchedLinear needs positive sizes, got num_models={num_models}, in={in_features}, out={out_features}"
            )
        if weight_init not in WEIGHT_INITS:
            raise ValueError(f"unknown weight_init {weight_init!r}; choose one of {WEIGHT_INITS}")
        self.num_models, self.in_features, self.out_features = num_models, in_features, out_features
        self.weight_init, self.bias_init = weight_init, bias_init
        self.weight = nn.Parameter(torch.empty(num_models, in_features, out_features, dtype=dtype))
        self.bias = nn.Parameter(torch.empty(num_models, 1, out_features, dtype=dtype)) if bias else None
        self.reset_parameters(generator)

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        fan_in, fan_out = self.in_features, self.out_features
        if self.weight_init == "he_normal":
            self.weight.normal_(0.0, math.sqrt(2.0 / fan_in), generator=generator)
        elif self.weight_init == "xavier_uniform":
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            self.weight.uniform_(-bound, bound, generator=generator)
        else:  # torch_default: kaiming_uniform(a=sqrt(5)) reduces to U(±1/sqrt(fan_in))
            bound = 1.0 / math.sqrt(fan_in)
            self.weight.uniform_(-bound, bound, generator=generator)
        if self.bias is None:
            return
        if self.bias_init == "torch_default":
            bound = 1.0 / math.sqrt(fan_in)
            self.bias.uniform_(-bound, bound, generator=generator)
        elif self.bias_init == "zero":
            self.bias.zero_()
        else:
            self.bias.fill_(float(self.bias_init))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:
            out = torch.matmul(x, self.weight)  # broadcast: [n, in] @ [k, in, out] -> [k, n, out]
            return out + self.bias if self.bias is not None else out
        if x.dim() != 3 or x.shape[0] != self.num_models:
            raise ValueError(
                f"input of shape {tuple(x.shape)} does not fit {self.num_models} models; pass [n, in] or [{self.num_models}, n, in]"
            )
        if self.bias is None:
            return torch.bmm(x, self.weight)
        return torch.baddbmm(self.bias, x, self.weight)


class BatchedMLP(nn.Module):
    """``k`` independent multilayer perceptrons evaluated together.

    sizes: ``[in, h_1, ..., h_m, out]``; ``hidden_activation`` after every hidden layer,
    ``output_activation`` after the last. ``dropout_p`` is applied before every hidden layer but
    the first (synthcity's discriminator: ``Linear, act, Dropout, Linear, act, Linear``); set
    ``dropout_generator`` to make its masks reproducible.
    forward returns ``[k, n, out]``; :meth:`single` returns ``[n, out]`` for ``num_models = 1``.
    """

    def __init__(
        self,
        num_models: int,
        sizes: Sequence[int],
        *,
        hidden_activation: str = "relu",
        output_activation: str = "identity",
        weight_init: str = "torch_default",
        bias_init: float | str = "torch_default",
        dropout_p: float = 0.0,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        sizes = [int(s) for s in sizes]
        if len(sizes) < 2 or min(sizes) < 1:
            raise ValueError(f"an MLP needs at least input and output sizes >= 1, got {sizes}")
        self.sizes = sizes
        self.layers = nn.ModuleList(
            BatchedLinear(num_models, a, b, weight_init=weight_init, bias_init=bias_init, generator=generator)
            for a, b in zip(sizes[:-1], sizes[1:])
        )
        self.hidden_activation = activation(hidden_activation)
        self.output_activation = activation(output_activation)
        self.dropout_p = float(dropout_p)
        self.dropout_generator: torch.Generator | None = None

    @property
    def num_models(self) -> int:
        return self.layers[0].num_models

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            h = layer(h)
            if i < last:
                h = self.hidden_activation(h)
                if self.dropout_p > 0 and i < last - 1:
                    h = dropout(h, p=self.dropout_p, generator=self.dropout_generator, training=self.training)
        return self.output_activation(h)

    def single(self, x: torch.Tensor) -> torch.Tensor:
        """Forward pass of a one-model MLP: ``[n, in] -> [n, out]``."""
        return self(x)[0]


class Mlp(nn.Module):
    """One dense network of ``nn.Linear`` layers (original and turing's WGAN generator and critic,
    implementation notes §original.architecture): ``hidden`` (an :func:`activation` name) after
    every hidden layer, ``output`` after the last; He-normal weights ``N(0, 2/fan_in)`` and zero
    biases (TF "xavier_init"), drawn layer by layer from ``generator``. Works with an input width
    of 0 (original/turing with d < 4: the output comes from the biases only).

    Kept beside :class:`BatchedMLP` rather than replaced by a one-model one: its ``[out, in]``
    weight draws and plain matrix products fix the archived original/turing runs bit for bit;
    the replica axis stacks it (``replicas.wgan.StackedMlp``)."""

    def __init__(self, sizes: Sequence[int], hidden: str, output: str, *, generator: torch.Generator):
        super().__init__()
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            with warnings.catch_warnings():  # nn.Linear(0, b) warns that its default init is a no-op
                warnings.simplefilter("ignore", UserWarning)
                lin = nn.Linear(a, b)
            with torch.no_grad():
                if a > 0:
                    lin.weight.normal_(0.0, math.sqrt(2.0 / a), generator=generator)
                lin.bias.zero_()
            layers += [lin, activation(hidden if i < len(sizes) - 2 else output)]
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)
