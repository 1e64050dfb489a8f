"""Read a fitted preset's architecture and training settings off the objects (Table 3).

The book's Table 3 is generated from instantiated models, not typed: layer widths come
from the ``Linear`` / ``BatchedLinear`` modules of the generator, student and teachers, the
optimiser from the ``torch.optim`` objects, and batch size, k, λ, L and δ from the fitted
attributes (``batch_size_``, ``num_teachers_``, ``delta_``) and the config.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .base import BaseGenerator
from .teacher_phase import NeuralRounds

__all__ = ["describe", "linear_widths"]

_GENERATOR = ("G", "gen_net")
_STUDENT = ("D", "student")
_OPT_GENERATOR = ("opt_G", "opt_generator")
_OPT_STUDENT = ("opt_D", "opt_student")


def _first(obj: Any, names: tuple[str, ...]) -> Any:
    for name in names:
        if getattr(obj, name, None) is not None:
            return getattr(obj, name)
    return None


def _modules_of(obj: Any) -> list[nn.Module]:
    """The nn.Modules held by ``obj`` (itself, or its attributes one level down)."""
    if isinstance(obj, nn.Module):
        return [obj]
    return [v for v in vars(obj).values() if isinstance(v, nn.Module)] if hasattr(obj, "__dict__") else []


def _is_linear(m: nn.Module) -> bool:
    return isinstance(m, nn.Linear) or (hasattr(m, "in_features") and hasattr(m, "out_features") and hasattr(m, "weight"))


def linear_widths(obj: Any) -> tuple[int | None, list[int]]:
    """(input width, output widths of the linear layers in registration order)."""
    layers = [m for mod in _modules_of(obj) for m in mod.modules() if _is_linear(m)]
    if not layers:
        return None, []
    return int(layers[0].in_features), [int(m.out_features) for m in layers]


def _optimiser(opt: Any) -> str:
    if not isinstance(opt, torch.optim.Optimizer):
        return "–"
    group = opt.param_groups[0]
    extra = []
    if "betas" in group and tuple(group["betas"]) != (0.9, 0.999):
        extra.append(f"β1={group['betas'][0]:g}")
    if group.get("weight_decay"):
        extra.append(f"wd={group['weight_decay']:g}")
    return f"{type(opt).__name__} {group['lr']:g}" + (f" ({', '.join(extra)})" if extra else "")


def _teacher_kind(teachers: Any) -> str:
    if teachers is None:
        return "–"
    name = type(teachers).__name__
    if "Logistic" in name:
        return "LogisticRegression"
    _, widths = linear_widths(teachers)
    return "{" + ", ".join(map(str, widths)) + "}" if widths else name


def _teacher_rounds(model: BaseGenerator) -> Any:
    """n_T as the fit ran it: the rounds of its neural teacher phase (the "paper" row included,
    :mod:`.hyperparameters`), else the config's ``teacher_iters``."""
    phase = getattr(model, "teacher_phase_", None)
    if isinstance(phase, NeuralRounds):
        return phase.rounds
    return getattr(model.config, "teacher_iters", "–")


def _student_rounds(model: BaseGenerator) -> Any:
    """n_S as the fit ran it (updated's "paper" row sets 5)."""
    cfg = model.config
    if hasattr(model, "student_steps"):
        return model.student_steps()
    return getattr(cfg, "student_iters", getattr(cfg, "generator_n_iter", "–"))


def describe(model: BaseGenerator) -> dict[str, Any]:
    """Table 3's rows for one fitted model (values at the data width it was fitted on)."""
    if not model.fitted_:
        raise RuntimeError("describe() reads a fitted model: call fit() first (max_iter=1 is enough)")
    cfg = model.config
    g_in, g_widths = linear_widths(_first(model, _GENERATOR))
    _, s_widths = linear_widths(_first(model, _STUDENT))
    teachers = getattr(model, "teachers", None)
    uses_pate = teachers is not None
    z_dim = getattr(model, "z_dim_", None)
    if z_dim is None:
        z_dim = getattr(cfg, "latent_dim", None) or g_in
    return {
        "Using PATE?": "yes" if uses_pate else "no",
        "Teachers k": getattr(model, "num_teachers_", None) if uses_pate else "–",
        "critic steps": "–" if uses_pate else getattr(model, "num_teachers_", None),
        "λ": getattr(cfg, "lam", "–"),
        "moments L": getattr(cfg, "num_moments", "–"),
        "δ used": getattr(model, "delta_", getattr(cfg, "delta", None)),
        "Optimizer (student/critic)": _optimiser(_first(model, _OPT_STUDENT)),
        "Optimizer (generator)": _optimiser(_first(model, _OPT_GENERATOR)),
        "Batch size": getattr(model, "batch_size_", getattr(cfg, "batch_size", None)),
        "Max iterations": getattr(model, "max_iter_", getattr(cfg, "max_iter", None)),
        "Teacher iterations": _teacher_rounds(model) if uses_pate else "–",
        "Student iterations": _student_rounds(model),
        "Teacher layers": _teacher_kind(teachers),
        "Student layers": "{" + ", ".join(map(str, s_widths)) + "}",
        "Noise dimension": z_dim,
        "Generator layers": "{" + ", ".join(map(str, g_widths)) + "}",
        "Iterations run": model.trace.iterations,
    }
