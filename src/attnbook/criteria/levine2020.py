"""Criteria of the levine2020 claims (ledger: data/claims/levine2020.csv)."""


__all__: list[str] = []
