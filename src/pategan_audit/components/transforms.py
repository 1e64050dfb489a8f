"""Data transforms of the six implementations, in one place (implementation notes §original.data, §updated.data, §synthcity.data, §turing.data, §borealis.data, §smartnoise.data, §data.split).

| implementation | transform | module |
|---|---|---|
| original | :class:`OriginalScaler` ((X - min)/(range + 1e-8)) | ``scalers`` |
| updated, borealis (harness) | :class:`MinMaxScaler` (clip=True) | ``scalers`` |
| synthcity | :class:`TabularEncoder` (BayesianGMM mode-specific normalisation + one-hot) | ``synthcity_encoder`` |
| turing | :class:`TuringEncoder` ((x - min)/(max + 1e-8), truncating/rounding integer decode) | ``turing_encoder`` |
| smartnoise | :class:`GanTableTransformer` ([-1, 1] min-max + label one-hot), :func:`approx_bounds` | ``smartnoise_transformer`` |
| all (benchmark post-processing) | :func:`restore_dtypes` | ``scalers`` |

Every transform takes ``bounds="data"`` (min/max read from the training table: V10-V13 and the
benchmark's behaviour) or ``bounds="public"`` with ``public_bounds={column: (lo, hi)}`` (inputs
clipped to them; implementation notes §corrected.bounds). The smartnoise transformer also offers ``bounds="dp"``.
"""
from pategan_audit.components.scalers import (
    BOUNDS_MODES,
    MinMaxScaler,
    OriginalScaler,
    resolve_bounds,
    restore_dtypes,
)
from pategan_audit.components.smartnoise_transformer import GanTableTransformer, approx_bounds, histogram_bin_edges
from pategan_audit.components.synthcity_encoder import ColumnLayout, TabularEncoder
from pategan_audit.components.turing_encoder import TuringColumn, TuringEncoder

__all__ = [
    "BOUNDS_MODES",
    "resolve_bounds",
    "restore_dtypes",
    "MinMaxScaler",
    "OriginalScaler",
    "ColumnLayout",
    "TabularEncoder",
    "TuringColumn",
    "TuringEncoder",
    "GanTableTransformer",
    "approx_bounds",
    "histogram_bin_edges",
]
