#!/usr/bin/env python3
"""Runs one SQL query with DuckDB (embedded: `pip install duckdb`) and prints the result as
aligned columns, the same on every terminal (DuckDB's own box view adapts to its width).
Used by the README's Parquet examples:  python3 scripts/sql.py "select ... from 'out/pdus.parquet'"
"""
import sys

try:
    import duckdb
except ImportError:
    sys.exit("scripts/sql.py: needs DuckDB for Python: pip install duckdb")

rel = duckdb.sql(sys.argv[1])
rows = [[("NULL" if v is None else str(round(v, 3)) if isinstance(v, float) else str(v)) for v in r] for r in rel.fetchall()]
head = list(rel.columns)
widths = [max(len(x) for x in col) for col in zip(head, *rows)]
for r in [head] + rows:
    print("  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths))).rstrip())
