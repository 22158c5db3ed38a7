#!/usr/bin/env python3
"""Summarises a package-benchmark markdown report (scripts/bench.sh writes one to
Benchmarks/.results/latest.md): each benchmark's medians, with ratios shown as ×, their p25–p75
spread as the noise, and the issue's targets checked.

    python3 Benchmarks/summarize.py Benchmarks/.results/latest.md
"""
import re
import sys

# (benchmark name pattern, metric pattern, comparison, bound): the targets of issue 6.
TARGETS = [
    (r"^E2E-", r"^throughput ", ">=", 0.97),
    (r"^E2E-", r"^CPU per request ", "<=", 1.05),
    (r"^Ratio-Build-", r"x1000", "<=", 1.0),
    (r"^Ratio-PathQuery-", r"x1000", "<=", 0.5),
]


def parse(path):
    """Yields (target, benchmark, metric, {percentile: value})."""
    target = benchmark = None
    header = None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("## ") and not line.startswith("## Baseline"):
            target = line[3:].strip()
        elif line.startswith("### "):
            benchmark = line[4:].strip()
            header = None
        elif line.startswith("|") and benchmark:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[0] == "Metric":
                header = cells
            elif header and not set(cells[0]) <= set(":-"):
                values = {}
                for name, cell in zip(header[1:], cells[1:]):
                    try:
                        values[name] = int(cell)
                    except ValueError:
                        pass
                yield target, benchmark, cells[0], values


def target_for(benchmark, metric):
    for name_pattern, metric_pattern, comparison, bound in TARGETS:
        if re.search(name_pattern, benchmark) and re.search(metric_pattern, metric):
            return comparison, bound
    return None


def main(path):
    rows = list(parse(path))
    if not rows:
        print(f"no results in {path}")
        return 1
    print("Summary: medians (p50) over the iterations; [p25–p75] is the spread between iterations.")
    print("Ratios are SwiftConnect ÷ baseline from the same iteration (alternating order).\n")
    width = max(len(f"{b} · {m}") for _, b, m, _ in rows)
    missed = 0
    for target, benchmark, metric, values in rows:
        if "p50" not in values:
            continue
        label = f"{benchmark} · {metric}"
        is_ratio = "x1000" in metric
        scale = 1000.0 if is_ratio else 1.0
        p50 = values["p50"] / scale
        spread = ""
        if "p25" in values and "p75" in values:
            # package-benchmark reverses percentiles for metrics that prefer larger values.
            low, high = sorted((values["p25"] / scale, values["p75"] / scale))
            if is_ratio:
                spread = f"[{low:.3f}–{high:.3f}]"
            else:
                spread = f"[{low:g}–{high:g}]"
        shown = f"{p50:.3f}×" if is_ratio else f"{p50:g}"
        verdict = ""
        goal = target_for(benchmark, metric) if is_ratio else None
        if goal:
            comparison, bound = goal
            met = p50 >= bound if comparison == ">=" else p50 <= bound
            verdict = f"target {comparison} {bound}: {'met' if met else 'MISSED'}"
            missed += 0 if met else 1
        print(f"{target:16} {label:{width}}  {shown:>10} {spread:>17}  {verdict}")
    print(f"\n{missed} target(s) missed." if missed else "\nEvery target met.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "Benchmarks/.results/latest.md"))
