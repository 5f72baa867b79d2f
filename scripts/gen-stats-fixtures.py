#!/usr/bin/env python3
"""Generate reference values for kbench-stats tests (crates/kbench-stats/tests/fixtures/).

Run: python3 scripts/gen-stats-fixtures.py   (needs numpy and scipy; tested with scipy 1.17)

Where scipy has the method, scipy computes the reference:
  - Mann-Whitney p: scipy.stats.mannwhitneyu (method="exact" without ties for <= 50 per side,
    "asymptotic" with continuity correction otherwise; the same switch as kbench-stats)
  - Welch t: scipy.stats.ttest_ind(equal_var=False), its confidence_interval(), and
    scipy.stats.ttest_ind_from_stats for summaries
  - KS: scipy.stats.ks_2samp(method="exact")
  - Mann-Kendall without ties: scipy.stats.kendalltau(range(n), y, method="exact")
  - Theil-Sen slope: scipy.stats.theilslopes
  - percentile CI ranks: scipy.stats.binom.ppf / binom.cdf
  - Benjamini-Hochberg: scipy.stats.false_discovery_control(method="bh")
  - special functions: scipy.stats.norm, scipy.stats.t, scipy.special.kolmogorov
  - descriptive: numpy (quantile type 7), scipy.stats.median_abs_deviation, scipy.stats.gmean

Where only R has the method (wilcox.test(conf.int=TRUE) gives the Hodges-Lehmann estimate and
Moses interval), R is not installable here, so the reference is computed from first
principles in this script, independently of the Rust code:
  - HL estimate: median of ALL pairwise differences log(b_j) - log(a_i), enumerated and sorted.
  - Moses interval: the k-th smallest and k-th largest enumerated differences, with k the
    largest integer such that P(U <= k-1) <= alpha/2; the exact U distribution is counted by
    the Mann-Whitney (1947) recursion with memoisation (cross-checked against scipy's exact
    Mann-Whitney p below), or, with ties or more than 50 values per side, the normal
    approximation k = floor(nm/2 + 1/2 - z * sd_U) with tie-corrected sd_U.
  - Mann-Kendall with ties: S and the tie-corrected normal p with continuity correction
    (Kendall 1975), written out from the formula.
  - Fieller interval for a ratio of means: the roots of the quadratic (Fieller 1954).
"""
import json
import math
import os
from functools import lru_cache

import numpy as np
from scipy import special, stats

ALPHA = 0.05
OUT = os.path.join(os.path.dirname(__file__), "..", "crates", "kbench-stats", "tests", "fixtures", "reference.json")
rng = np.random.default_rng(20260801)


def lognormal(n, sd=0.02, scale=1.0):
    return [float(v) for v in np.exp(rng.normal(0, sd, n)) * scale]


def rounded(values, digits):
    """Values rounded to create ties (timers with coarse resolution)."""
    return [float(round(v, digits)) for v in values]


def has_ties(values):
    return len(set(values)) < len(values)


@lru_cache(maxsize=None)
def u_count(u, n, m):
    """Number of arrangements of n x's and m y's with U = u (Mann & Whitney 1947)."""
    if u < 0:
        return 0
    if n == 0 or m == 0:
        return 1 if u == 0 else 0
    return u_count(u - m, n - 1, m) + u_count(u, n, m - 1)


def exact_u_cdf(u, n, m):
    total = math.comb(n + m, n)
    return sum(u_count(v, n, m) for v in range(u + 1)) / total


def tie_term(values):
    _, counts = np.unique(values, return_counts=True)
    return float(sum(t ** 3 - t for t in counts))


def moses_k(n, m, exact, ties):
    if exact:
        k = 0
        while k < n * m and exact_u_cdf(k, n, m) <= ALPHA / 2:
            k += 1
        return k
    total = n + m
    sd = math.sqrt(n * m / 12 * ((total + 1) - ties / (total * (total - 1))))
    k = n * m / 2 + 0.5 - stats.norm.ppf(1 - ALPHA / 2) * sd
    return 0 if k < 1 else min(int(math.floor(k)), n * m // 2)


def rank_case(name, a, b):
    la, lb = np.log(a), np.log(b)
    diffs = np.sort((lb[None, :] - la[:, None]).ravel())
    n, m = len(a), len(b)
    exact = not has_ties(list(a) + list(b)) and n <= 50 and m <= 50
    # Ties are decided on the log values for the interval, on raw values for the test.
    exact_ci = not has_ties(list(la) + list(lb)) and n <= 50 and m <= 50
    k = moses_k(n, m, exact_ci, tie_term(np.concatenate([la, lb])))
    mw = stats.mannwhitneyu(b, a, alternative="two-sided", method="exact" if exact else "asymptotic", use_continuity=True)
    if exact and n * m <= 400:
        # Cross-check the first-principles U distribution against scipy's exact p.
        u = min(mw.statistic, n * m - mw.statistic)
        mine = min(1.0, 2 * exact_u_cdf(int(round(u)), n, m))
        assert abs(mine - mw.pvalue) < 1e-12, (name, mine, mw.pvalue)
    return {
        "name": name,
        "a": list(a),
        "b": list(b),
        "hl_log": float(np.median(diffs)),
        "moses_k": k,
        "ci_log": [float(diffs[k - 1]), float(diffs[n * m - k])] if k >= 1 else None,
        "mw_u_b": float(mw.statistic),
        "mw_p": float(mw.pvalue),
        "mw_exact": exact,
    }


def rank_cases():
    cases = []
    for n, m, shift in [(5, 5, 0.0), (6, 9, 0.03), (10, 10, 0.01), (12, 7, -0.02), (20, 20, 0.02), (30, 25, 0.0), (4, 40, 0.05)]:
        cases.append(rank_case(f"lognormal {n}v{m} shift {shift}", lognormal(n), lognormal(m, scale=1 + shift)))
    cases.append(rank_case("ties 15v15", rounded(lognormal(15, 0.03), 2), rounded(lognormal(15, 0.03, 1.02), 2)))
    cases.append(rank_case("ties 40v60", rounded(lognormal(40, 0.05), 2), rounded(lognormal(60, 0.05, 1.01), 2)))
    cases.append(rank_case("large 80v120", lognormal(80), lognormal(120, scale=1.01)))
    cases.append(rank_case("3v3 no interval", lognormal(3), lognormal(3)))
    return cases


def welch_cases():
    cases = []
    for n, m, sd_a, sd_b, shift in [(5, 5, 0.02, 0.02, 0.0), (3, 8, 0.01, 0.04, 0.03), (20, 12, 0.05, 0.02, -0.01)]:
        a, b = lognormal(n, sd_a, 100.0), lognormal(m, sd_b, 100.0 * (1 + shift))
        res = stats.ttest_ind(b, a, equal_var=False)
        ci = res.confidence_interval(1 - ALPHA)
        cases.append({"a": a, "b": b, "t": float(res.statistic), "df": float(res.df), "p": float(res.pvalue), "ci": [float(ci.low), float(ci.high)]})
    return cases


def fieller(ma, va, na, mb, vb, nb):
    se2a, se2b = va / na, vb / nb
    df = (se2a + se2b) ** 2 / (se2a ** 2 / (na - 1) + se2b ** 2 / (nb - 1))
    t = stats.t.ppf(1 - ALPHA / 2, df)
    qa = ma * ma - t * t * se2a
    qb = -2 * ma * mb
    qc = mb * mb - t * t * se2b
    disc = qb * qb - 4 * qa * qc
    r1, r2 = (-qb - math.sqrt(disc)) / (2 * qa), (-qb + math.sqrt(disc)) / (2 * qa)
    return [min(r1, r2), max(r1, r2)]


def summary_cases():
    cases = []
    # (mean, sd, n) pairs, like perf stat -r output converted to SD.
    for a, b in [((5.483, 0.443, 5), (5.70, 0.30, 5)), ((1000.0, 12.0, 10), (1021.0, 15.0, 10)), ((2.0, 0.5, 3), (2.1, 0.6, 4))]:
        res = stats.ttest_ind_from_stats(a[0], a[1], a[2], b[0], b[1], b[2], equal_var=False)
        cases.append({"a": list(a), "b": list(b), "p": float(res.pvalue), "ratio_ci": fieller(a[0], a[1] ** 2, a[2], b[0], b[1] ** 2, b[2])})
    return cases


def ks_cases():
    cases = []
    for n, m, shift, sd_b in [(8, 8, 0.0, 0.02), (10, 15, 0.02, 0.02), (30, 30, 0.0, 0.06), (50, 40, 0.01, 0.02)]:
        a, b = lognormal(n), lognormal(m, sd_b, 1 + shift)
        res = stats.ks_2samp(a, b, method="exact")
        cases.append({"a": a, "b": b, "d": float(res.statistic), "p": float(res.pvalue)})
    return cases


def mk_normal(y):
    n = len(y)
    s = sum(np.sign(y[j] - y[i]) for i in range(n) for j in range(i + 1, n))
    _, counts = np.unique(y, return_counts=True)
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in counts)) / 18
    z = (abs(s) - 1) / math.sqrt(var) if s != 0 else 0.0
    return float(s), float(min(1.0, 2 * stats.norm.sf(z))) if s != 0 else 1.0


def drift_cases():
    cases = []
    for n, slope in [(8, 0.0), (12, 0.002), (20, 0.001), (40, 0.0005)]:
        y = [float(v) for v in np.log(lognormal(n)) + slope * np.arange(n)]
        tau = stats.kendalltau(np.arange(n), y, method="exact")
        s = sum(np.sign(y[j] - y[i]) for i in range(n) for j in range(i + 1, n))
        cases.append({"y": y, "s": float(s), "p": float(tau.pvalue), "slope": float(stats.theilslopes(y).slope), "exact": True})
    for n in [15, 60]:
        y = rounded(list(np.arange(n) * 0.01 + rng.normal(0, 0.05, n)), 1)
        s, p = mk_normal(y)
        cases.append({"y": y, "s": s, "p": p, "slope": float(stats.theilslopes(y).slope), "exact": False})
    return cases


def percentile_cases():
    cases = []
    for n in [20, 100, 1000, 100_000, 1_000_000]:
        for q in [0.5, 0.9, 0.99, 0.999]:
            lower = int(stats.binom.ppf(ALPHA / 2, n, q))
            upper = int(stats.binom.ppf(1 - ALPHA / 2, n, q)) + 1
            ok = lower >= 1 and upper <= n
            coverage = float(stats.binom.cdf(upper - 1, n, q) - stats.binom.cdf(lower - 1, n, q)) if ok else None
            cases.append({"n": n, "q": q, "lower_rank": lower if ok else None, "upper_rank": upper if ok else None, "coverage": coverage})
    return cases


def descriptive_cases():
    cases = []
    for values in [lognormal(7, 0.1, 3.0), lognormal(24, 0.3, 50.0), [1.0, 2.0, 2.0, 3.0, 10.0, 2.5]]:
        x = np.array(values)
        cases.append({
            "values": values,
            "mean": float(x.mean()),
            "median": float(np.median(x)),
            "sd": float(x.std(ddof=1)),
            "q1": float(np.quantile(x, 0.25)),
            "q3": float(np.quantile(x, 0.75)),
            "mad": float(stats.median_abs_deviation(x)),
            "geometric_mean": float(stats.gmean(x)),
        })
    return cases


def special_cases():
    ps = [1e-10, 0.001, 0.025, 0.3, 0.5, 0.975, 0.999999]
    return {
        "normal_quantile": [[p, float(stats.norm.ppf(p))] for p in ps],
        "normal_sf": [[z, float(stats.norm.sf(z))] for z in [-3.0, 0.0, 1.96, 5.0, 9.0]],
        "t_quantile": [[p, df, float(stats.t.ppf(p, df))] for p in [0.9, 0.975, 0.995] for df in [1.0, 2.0, 4.5, 30.0, 500.0]],
        "t_sf": [[t, df, float(stats.t.sf(t, df))] for t in [0.5, 2.0, 6.0] for df in [1.0, 3.0, 17.3, 200.0]],
        "kolmogorov_sf": [[x, float(special.kolmogorov(x))] for x in [0.3, 0.8, 1.36, 2.0]],
    }


def bh_cases():
    cases = []
    for p in [[0.01, 0.04, 0.03, 0.2, 0.5], [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216, 0.222, 0.251, 0.269, 0.275, 0.34, 0.341, 0.384, 0.569, 0.594, 0.696, 0.762, 0.94, 0.942, 0.975, 0.986]]:
        cases.append({"p": p, "adjusted": [float(v) for v in stats.false_discovery_control(p, method="bh")]})
    return cases


def main():
    fixtures = {
        "alpha": ALPHA,
        "rank": rank_cases(),
        "welch": welch_cases(),
        "summaries": summary_cases(),
        "ks": ks_cases(),
        "drift": drift_cases(),
        "percentile": percentile_cases(),
        "descriptive": descriptive_cases(),
        "special": special_cases(),
        "bh": bh_cases(),
    }
    with open(OUT, "w") as f:
        json.dump(fixtures, f, indent=1)
        f.write("\n")
    print(f"wrote {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
