"""Presentation code of book pages that are not one of the paper's sections (excluded from the
source hash, like ``plotting`` and the section ``page`` packages)."""
