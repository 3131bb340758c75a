"""Case spaces (spec tables -> cases) and per-family execution flows."""
