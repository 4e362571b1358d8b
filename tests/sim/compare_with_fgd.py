#!/usr/bin/env python3
"""Compares `draplane simulate --csv` curves with the FGD simulator's published
results (experiments/analysis/expected_results/analysis_allo_discrete.csv of
hkust-adsl/kubernetes-scheduler-simulator): mean over seeds of the GPU
allocation ratio at 100% and 130% arrived workload, and the mean absolute
difference of the whole mean curves (0..130%).

Usage: compare_with_fgd.py OUR_CURVES.csv EXPECTED.csv TRACE   (TRACE: default, gpushare100, ...)
"""
import csv
import statistics as st
import sys
from collections import defaultdict

NAMES = {"random": "01-Random", "dot-product": "02-DotProd", "gpu-clustering": "03-GpuClustering",
         "gpu-packing": "04-GpuPacking", "best-fit": "05-BestFit", "fgd": "06-FGD"}


def main():
    ours_file, expected_file, trace = sys.argv[1:4]
    ours = defaultdict(lambda: defaultdict(list))  # policy -> pct -> [allocated % per seed]
    for row in csv.DictReader(open(ours_file)):
        ours[row["policy"]][int(row["arrived_pct"])].append(100 * float(row["allocated"]))
    theirs = defaultdict(lambda: defaultdict(list))
    for row in csv.DictReader(open(expected_file)):
        if row["workload"] != "openb_pod_list_" + trace:
            continue
        for pct in range(0, 131):
            v = row.get(str(pct))
            if v:
                theirs[row["sc_policy"]][pct].append(float(v))
    print("| policy | seeds | ours @100% | paper sim @100% | ours @130% | paper sim @130% | mean abs diff 0-130% |")
    print("|---|---|---|---|---|---|---|")
    for policy, curve in ours.items():
        seeds = len(curve.get(100, []))
        at = lambda c, p: "%.2f ± %.2f" % (st.mean(c[p]), st.pstdev(c[p])) if c.get(p) else "-"
        name = NAMES.get(policy)
        ref = theirs.get(name, {}) if name else {}
        diffs = [abs(st.mean(curve[p]) - st.mean(ref[p])) for p in range(0, 131) if curve.get(p) and ref.get(p)]
        mad = "%.2f" % st.mean(diffs) if diffs else "-"
        print("| %s | %d | %s | %s | %s | %s | %s |" % (policy, seeds, at(curve, 100), at(ref, 100) if ref else "-",
                                                      at(curve, 130), at(ref, 130) if ref else "-", mad))


if __name__ == "__main__":
    main()
