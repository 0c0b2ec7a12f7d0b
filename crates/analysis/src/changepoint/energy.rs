//! The energy statistic of E-Divisive means for every split of a range (Matteson & James
//! 2014, α = 1) in O(m log m) rather than the O(m²) of the pairwise definition:
//!
//! - `dist[i]`, the sum of distances from point i to every point of the range, comes from
//!   the range's value order and prefix sums, in O(m);
//! - `left[t]`, the within-sum of the first t points, from one sweep with a Fenwick tree over
//!   ranks (count and sum of the points below) for the whole series only: a left part of a
//!   split takes its parent's prefixes, a right part its parent's suffixes and turns them
//!   into prefixes in O(m), so the search is O(n log n) for the sort and sweep plus O(n) per
//!   level;
//! - then, with S(t) = Σ_{i<t} dist[i] = 2·left[t] + between(t), the between-sum and the
//!   right side's within-sum follow without a second sweep.

/// What a range's search starts from: nothing (the whole series, one Fenwick sweep), or its
/// parent's within-sums, from which its own follow in O(m).
pub(super) enum Known {
    Nothing,
    /// The within-sums of the range's prefixes (it is a left part).
    Prefix(Vec<f64>),
    /// The within-sums of the range's suffixes (it is a right part).
    Suffix(Vec<f64>),
}

/// Within- and between-side sums of distances of one range, for every split of it.
#[derive(Default)]
pub(super) struct Scratch {
    /// `left[t]`: Σ |xᵢ − xₖ| over pairs i < k < t.
    left: Vec<f64>,
    /// `reach[t]`: Σ over i < t of the distances from xᵢ to every point of the range.
    reach: Vec<f64>,
    rank: Vec<usize>,
    dist: Vec<f64>,
    /// Fenwick tree over ranks: (count, sum) of the points added so far.
    tree: Vec<(f64, f64)>,
}

impl Scratch {
    /// Prepares every split of `x`, given `sorted`: its point indices (0-based within `x`)
    /// ordered by value, and what its parent knew.
    pub(super) fn fill(&mut self, x: &[f64], sorted: impl Iterator<Item = usize>, known: Known) {
        let m = x.len();
        self.rank.resize(m, 0);
        self.dist.resize(m, 0.0);
        let total: f64 = x.iter().sum();
        let (mut below, mut r) = (0.0, 0usize);
        for i in sorted {
            self.rank[i] = r;
            let v = x[i];
            // Distances to the r points below and the m − r − 1 above it in value.
            self.dist[i] = v * r as f64 - below + (total - below - v) - v * (m - r - 1) as f64;
            below += v;
            r += 1;
        }
        self.reach.clear();
        self.reach.push(0.0);
        let mut reach = 0.0;
        for d in &self.dist {
            reach += d;
            self.reach.push(reach);
        }
        self.left.clear();
        match known {
            Known::Nothing => self.sweep(x),
            Known::Prefix(left) => self.left.extend_from_slice(&left),
            // right[t] = W + left[t] − reach[t], with W = right[0].
            Known::Suffix(right) => self.left.extend(
                right
                    .iter()
                    .zip(&self.reach)
                    .map(|(r, reach)| r - right[0] + reach),
            ),
        }
    }

    /// What the two parts of a split before point `t` inherit: the left part's within-sums
    /// of prefixes, and the right part's of suffixes (right[t] = W + left[t] − reach[t]).
    pub(super) fn split(&self, t: usize) -> (Known, Known) {
        let m = self.left.len() - 1;
        let whole = self.left[m];
        let suffix = (t..=m)
            .map(|i| whole + self.left[i] - self.reach[i])
            .collect();
        (
            Known::Prefix(self.left[..=t].to_vec()),
            Known::Suffix(suffix),
        )
    }

    /// The left within-sums by one sweep with the Fenwick tree.
    fn sweep(&mut self, x: &[f64]) {
        self.tree.clear();
        self.tree.resize(x.len() + 1, (0.0, 0.0));
        self.left.push(0.0);
        let (mut n, mut added, mut within) = (0.0, 0.0, 0.0);
        for (i, &v) in x.iter().enumerate() {
            let (below_n, below_sum) = self.prefix(self.rank[i] + 1);
            // Distances from v to the points already in: those below plus those above.
            within += v * below_n - below_sum + (added - below_sum) - v * (n - below_n);
            self.add(self.rank[i] + 1, v);
            n += 1.0;
            added += v;
            self.left.push(within);
        }
    }

    /// Count and sum of the points with rank below `r` (1-based Fenwick index).
    fn prefix(&self, mut r: usize) -> (f64, f64) {
        let (mut n, mut s) = (0.0, 0.0);
        while r > 0 {
            let (c, v) = self.tree[r];
            n += c;
            s += v;
            r &= r - 1;
        }
        (n, s)
    }

    fn add(&mut self, mut r: usize, v: f64) {
        while r < self.tree.len() {
            self.tree[r].0 += 1.0;
            self.tree[r].1 += v;
            r += r & r.wrapping_neg();
        }
    }

    /// Matteson & James' statistic for the split before point `t`: the size-weighted energy
    /// distance p·q/(p+q) · (2/(pq)·Σ|x−y| − Σ|x−x'|/C(p,2) − Σ|y−y'|/C(q,2)).
    pub(super) fn q(&self, t: usize) -> Option<f64> {
        let m = self.left.len() - 1;
        let (p, q) = (t as f64, (m - t) as f64);
        if t < 2 || m - t < 2 {
            return None;
        }
        let wl = self.left[t];
        let between = self.reach[t] - 2.0 * wl;
        let wr = self.left[m] - wl - between;
        let e = 2.0 * between / (p * q) - 2.0 * wl / (p * (p - 1.0)) - 2.0 * wr / (q * (q - 1.0));
        Some(p * q / (p + q) * e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Matteson & James' statistic from its pairwise definition.
    fn q_by_pairs(x: &[f64], t: usize) -> f64 {
        let (l, r) = x.split_at(t);
        let sum = |a: &[f64], b: &[f64]| -> f64 {
            a.iter()
                .map(|u| b.iter().map(|v| (u - v).abs()).sum::<f64>())
                .sum()
        };
        let (p, q) = (l.len() as f64, r.len() as f64);
        let e =
            2.0 * sum(l, r) / (p * q) - sum(l, l) / (p * (p - 1.0)) - sum(r, r) / (q * (q - 1.0));
        p * q / (p + q) * e
    }

    fn sorted(x: &[f64]) -> Vec<usize> {
        let mut o: Vec<usize> = (0..x.len()).collect();
        o.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
        o
    }

    #[test]
    fn sums_match_the_pairwise_definition_also_when_inherited() {
        let x: Vec<f64> = (0..40u32)
            .map(|i| f64::from((i * 7919) % 31) + if i > 25 { 9.5 } else { 0.0 })
            .collect();
        let mut s = Scratch::default();
        s.fill(&x, sorted(&x).into_iter(), Known::Nothing);
        for t in 2..=38 {
            let q = s.q(t).unwrap();
            assert!(
                (q - q_by_pairs(&x, t)).abs() < 1e-9 * q.abs().max(1.0),
                "t = {t}"
            );
        }
        assert_eq!((s.q(1), s.q(39)), (None, None));
        // The two parts of a split at 17, each from what its parent handed down.
        let (left, right) = s.split(17);
        for (part, known) in [(&x[..17], left), (&x[17..], right)] {
            let mut c = Scratch::default();
            c.fill(part, sorted(part).into_iter(), known);
            for t in 2..=part.len() - 2 {
                let q = c.q(t).unwrap();
                assert!(
                    (q - q_by_pairs(part, t)).abs() < 1e-9 * q.abs().max(1.0),
                    "t = {t}"
                );
            }
        }
    }
}
