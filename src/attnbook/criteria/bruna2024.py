"""Criteria of the bruna2024 claims (ledger: data/claims/bruna2024.csv)."""


__all__: list[str] = []
