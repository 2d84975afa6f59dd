"""The statistics rules bench/report.py states every figure by (bench/README.md, "Statistics rules").

A sample is the values one figure was measured from (boots, runs). Its summary carries its n; a
spread only from MIN_SPREAD_N values; a sample of two clusters is reported as bimodal with each
cluster's median, never as one median; digits stop at the spread's first significant digit.
"""
import math
import statistics

MIN_SPREAD_N = 3  # fewer values give no spread worth printing
MIN_NOISY_N = 5  # wall times and multi-CPU ratios: fewer runs decide no target
BIMODAL_GAP = 3.0  # the gap between two clusters, in units of the wider cluster's range
BIMODAL_MIN_GAP = 0.05  # ... and at least this share of the sample's median
BIMODAL_MIN_CLUSTER = 2  # a single far value is an outlier, not a cluster

# Ratios throughout: time of kpack (or of the variant named first) / time of the reference, so
# below 1 = kpack faster. Every ratio column's header names it with RATIO_NOTE.
RATIO_NOTE = "< 1: faster"


def clusters(values):
    """The two clusters of a bimodal sample (low, high), or None.

    Sorted, the sample is cut at its widest gap between neighbours that leaves at least
    BIMODAL_MIN_CLUSTER values on each side; it is bimodal when that gap exceeds BIMODAL_GAP times
    the wider cluster's range and BIMODAL_MIN_GAP of the median. Unimodal noise puts its widest gap
    inside the spread of its values; two states of a machine (a helper CPU that ran or did not, a
    host that was busy for half the boots) leave a gap wider than either group.
    """
    v = sorted(values)
    k = BIMODAL_MIN_CLUSTER
    if len(v) < 2 * k:
        return None
    cut = max(range(k, len(v) - k + 1), key=lambda i: v[i] - v[i - 1])
    low, high = v[:cut], v[cut:]
    gap = high[0] - low[-1]
    within = max(low[-1] - low[0], high[-1] - high[0])
    if gap > BIMODAL_GAP * within and gap > BIMODAL_MIN_GAP * abs(statistics.median(v)):
        return low, high
    return None


class Sample:
    """One figure's values: n, median, half range (n >= MIN_SPREAD_N only), bimodal clusters."""

    def __init__(self, values):
        self.values = sorted(values)
        self.n = len(self.values)
        if not self.n:
            raise ValueError("a sample needs at least one value")
        self.median = statistics.median(self.values)
        self.spread = (self.values[-1] - self.values[0]) / 2 if self.n >= MIN_SPREAD_N else None
        self.clusters = clusters(self.values)

    @property
    def bimodal(self):
        return self.clusters is not None

    @property
    def fastest(self):
        """The median of the low cluster when bimodal (time figures: the undisturbed state)."""
        return statistics.median(self.clusters[0]) if self.clusters else self.median

    def cell(self, scale=1.0, decimals=1):
        """'1486.4 ±0.5 (n=3)', '1461.7 (n=1)', or 'bimodal: 476 (n=6) / 1079 (n=4)', in units of SCALE."""
        if self.clusters:
            return "bimodal: " + " / ".join(summary(c, scale, decimals) for c in self.clusters)
        return summary(self.values, scale, decimals)


def summary(values, scale=1.0, decimals=1):
    """A unimodal sample's median, its half range when n >= MIN_SPREAD_N, and its n."""
    n, mid = len(values), statistics.median(values)
    spread = (max(values) - min(values)) / 2 / scale if n >= MIN_SPREAD_N else None
    return figure(mid / scale, spread, decimals, n=n)


def places(spread, decimals):
    """Decimals of a figure whose spread is SPREAD: down to the spread's first significant digit,
    never more than the unit's DECIMALS; DECIMALS when there is no spread (n < 3) or it is 0 (a
    repeatable measurement)."""
    if not spread:
        return decimals
    return min(decimals, -math.floor(math.log10(abs(spread))))


def rounded(value, digits):
    """VALUE to DIGITS decimals, as text; negative DIGITS round to tens, hundreds..."""
    if digits >= 0:
        return f"{value:.{digits}f}"
    return f"{round(value, digits):.0f}"


def figure(value, spread=None, decimals=1, sign=False, n=None):
    """'1486.4 ±0.5 (n=3)' or '1461.7 (n=1)', the digits matching the spread. A spread needs its n
    (at least MIN_SPREAD_N): a figure derived from samples carries the smallest n of its inputs."""
    if spread is not None and (n is None or n < MIN_SPREAD_N):
        raise ValueError(f"a spread needs n >= {MIN_SPREAD_N}, not {n}")
    digits = places(spread, decimals)
    text = rounded(value, digits)
    if sign and not text.startswith("-"):
        text = "+" + text
    if spread is not None:
        shown = rounded(spread, digits)
        if float(shown) == 0:  # narrower than the unit's last digit
            shown = "<" + rounded(10 ** -digits, max(digits, 0))
        text += f" ±{shown}"
    return text if n is None else f"{text} (n={n})"


def ratio(a, b):
    """A / B of two samples' medians and that ratio's spread (the relative half ranges added; None
    when either has no spread)."""
    value = a.median / b.median
    if a.spread is None or b.spread is None:
        return value, None
    return value, value * (a.spread / a.median + b.spread / b.median)


def ratio_cell(a, b, decimals=2):
    """The ratio of two samples as a table cell: 'bimodal' when either is, the spread when both have one."""
    if a.bimodal or b.bimodal:
        return "bimodal"
    value, spread = ratio(a, b)
    return figure(value, spread, decimals, n=min(a.n, b.n))


def noisy_verdict(ok, samples):
    """A target's 'met' cell on wall-time or multi-CPU figures: no verdict from a bimodal sample or
    fewer than MIN_NOISY_N runs."""
    if any(s.bimodal for s in samples):
        return "undecided: bimodal"
    few = min(s.n for s in samples)
    if few < MIN_NOISY_N:
        return f"undecided: n={few} < {MIN_NOISY_N}"
    return "yes" if ok else "**no**"
