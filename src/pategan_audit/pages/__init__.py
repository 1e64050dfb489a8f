"""Presentation: everything that shows the domain's results, one layer above it (``ganev2025elusive``
§§4-6 as book pages). The section pages (``utility``, ``auditing``, ``traces``: one builder module
per section of a notebook), the other pages (``implementations``, ``done_right``, ``summary``,
``archives``), their shared ``blocks``, the figures (``plotting``), the scorecard with its
tolerances and diagnoses, the section output sink (``report``), the notebooks' parameter checks
(``params``), display settings (``display``) and the Sphinx hook (``bookhook``). Nothing outside
this package imports it (``tests/test_layers.py``), and none of it enters the source hash or an
archive's provenance (:data:`pategan_audit.runner.NOT_COMPUTING`)."""
