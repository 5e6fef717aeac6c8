"""Binning for examples/run_binning.sql, in the manner of SQLFlow's binning runnable.

Run as a script (TO RUN run_binning.py CMD "--columns=...", "--bin_num=..."), it bins each
column into equal-width bins and writes two tables: each bin's bounds, count and share of
the rows, and each column's summary. Its function ``shares`` (TO RUN run_binning.shares)
shows the other form: the rows and the WITH values in, the tables returned.
"""

import argparse

import numpy as np


def bins(values: np.ndarray, count: int) -> dict[str, np.ndarray]:
    """Equal-width bins of ``values`` (NULLs, as NaN, left out): bounds, counts, shares."""
    present = values[~np.isnan(values)]
    edges = np.linspace(present.min(), present.max(), count + 1)
    counts, _ = np.histogram(present, edges)
    return {"low": edges[:-1], "high": edges[1:], "rows": counts, "share": counts / len(present)}


def shares(rows: dict[str, np.ndarray], column: str, digits: int = 3) -> dict:
    """Each value of ``column`` and its share of the rows."""
    values, counts = np.unique(rows[column].astype(str), return_counts=True)
    return {"iris_shares": {column: values, "share": np.round(counts / counts.sum(), digits)}}


def main() -> None:
    from sqlml.statements.run import api

    parser = argparse.ArgumentParser()
    parser.add_argument("--columns", required=True)
    parser.add_argument("--bin_num", type=int, default=10)
    args = parser.parse_args()
    rows = api.rows()
    binned, summary = [], []
    for name in args.columns.split(","):
        values = rows[name].astype(np.float64)
        found = bins(values, args.bin_num)
        binned.append({"column_name": [name] * args.bin_num, "bin": range(args.bin_num), **found})
        summary.append((name, len(values), values.min(), values.max(), values.mean()))
    binning, stats = api.tables()
    api.write(binning, {key: np.concatenate([b[key] for b in binned]) for key in binned[0]})
    names = ("column_name", "rows", "min", "max", "mean")
    api.write(stats, {key: [row[i] for row in summary] for i, key in enumerate(names)})
    print(f"binned {len(summary)} columns into {args.bin_num} bins each")


if __name__ == "__main__":
    main()
