"""The blocks of the training-traces page: those of the auditing page
(:mod:`pategan_audit.auditing.page.blocks`: tables, text, glue, scorecard rows, printed lines and
figures written where they are made and shown in order), written and displayed by :func:`publish`."""
from ...auditing.page.blocks import (
    Block,
    Glue,
    Print,
    SaveFigure,
    SaveTable,
    Scorecard,
    ShowFigure,
    ShowTable,
    Text,
    publish,
    scorecard,
    table,
)

__all__ = ["Block", "Glue", "Print", "SaveFigure", "SaveTable", "Scorecard", "ShowFigure", "ShowTable", "Text", "publish",
           "scorecard", "table"]
