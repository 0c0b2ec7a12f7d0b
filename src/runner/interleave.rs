//! Scenarios a plan compares — the two sides of a `[[versus]]`, the members of a ranking —
//! run interleaved: in blocks of one repetition each, in a seeded random order, so drift over
//! the run and the order they run in fall on every side alike instead of favouring whichever
//! ran first (Mytkowicz et al., ASPLOS 2009). Every other scenario runs on its own.

use super::scenario::ScenarioRun;
use super::{Progressive, RunOptions};
use crate::exit::AppError;
use crate::plan::Plan;
use perfbase_analysis::study::ScenarioStudy;
use perfbase_core::study::Interleaving;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The scenarios that run together, by index, each group in plan order, the groups in the
/// order of their first scenario: the comparisons' scenarios joined wherever they share one,
/// every other scenario alone. With `[plan] interleave = false`, every scenario alone.
pub(super) fn groups(plan: &Plan) -> Vec<Vec<usize>> {
    let n = plan.scenarios.len();
    let index = |name: &str| plan.scenarios.iter().position(|s| s.name == name);
    // Union-find over the scenarios, joined by each comparison.
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    if plan.interleave {
        let compared = plan
            .versus
            .iter()
            .map(|v| vec![v.a.clone(), v.b.clone()])
            .chain(plan.rankings.iter().map(|r| r.scenarios.clone()));
        for names in compared {
            let members: Vec<usize> = names.iter().filter_map(|m| index(m)).collect();
            for pair in members.windows(2) {
                let (a, b) = (root(&mut parent, pair[0]), root(&mut parent, pair[1]));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..n {
        let r = root(&mut parent, i);
        match groups.iter_mut().find(|g| root(&mut parent, g[0]) == r) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

/// Runs `group` in blocks until none of its scenarios wants another repetition; returns
/// each one's findings and the order the blocks ran in.
pub(super) fn run_group(
    group: &[usize],
    o: &RunOptions,
    state: &mut Progressive<'_>,
    monitor: &perfbase_monitor::Monitor,
    interrupt: &Arc<AtomicBool>,
) -> Result<(Vec<(usize, ScenarioStudy)>, Interleaving), AppError> {
    let plan = state.plan;
    let mut runs: Vec<ScenarioRun<'_>> = group
        .iter()
        .map(|&k| ScenarioRun::new(k, &plan.scenarios[k]))
        .collect();
    let seed = plan.seed;
    // Each group its own stream, so adding a scenario elsewhere does not reorder this one.
    let mut orders = Orders::new(seed ^ (group[0] as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    loop {
        let stopped = state.stopped(interrupt);
        let wanting: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i].wants_more(stopped))
            .collect();
        if wanting.is_empty() {
            break;
        }
        let order = orders.next(&wanting, blocks.last());
        for &i in &order {
            if state.stopped(interrupt) {
                break;
            }
            runs[i].repetition(o, state, monitor, interrupt)?;
        }
        blocks.push(order);
    }
    let studies = runs
        .into_iter()
        .zip(group)
        .filter(|(r, _)| r.done > 0)
        .map(|(r, &k)| (k, r.finish(state)))
        .collect();
    let interleaving = Interleaving {
        scenarios: group
            .iter()
            .map(|&k| plan.scenarios[k].name.clone())
            .collect(),
        seed,
        blocks,
    };
    Ok((studies, interleaving))
}

/// The blocks' orders: a fresh seeded shuffle, then its reverse, then a fresh shuffle…, so
/// each pair of blocks is balanced (AB then BA: a later position's drift falls on each side
/// once) while which side starts stays random.
struct Orders {
    /// SplitMix64 (Steele, Lea & Flood 2014): a seeded, reproducible stream.
    state: u64,
    /// The last block was a fresh draw, so the next one is its reverse.
    reverse_next: bool,
}

impl Orders {
    fn new(seed: u64) -> Self {
        Orders {
            state: seed,
            reverse_next: false,
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The order of the next block over the scenarios still `wanting` more runs.
    fn next(&mut self, wanting: &[usize], previous: Option<&Vec<usize>>) -> Vec<usize> {
        if let Some(p) = previous.filter(|p| self.reverse_next && same_members(p, wanting)) {
            self.reverse_next = false;
            return p.iter().rev().copied().collect();
        }
        let mut order = wanting.to_vec();
        // Fisher–Yates.
        for i in (1..order.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        self.reverse_next = true;
        order
    }
}

fn same_members(a: &[usize], b: &[usize]) -> bool {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_in_balanced_pairs_and_the_seed_decides() {
        let draw = |seed| {
            let mut o = Orders::new(seed);
            let mut blocks: Vec<Vec<usize>> = Vec::new();
            for _ in 0..6 {
                let next = o.next(&[0, 1], blocks.last());
                blocks.push(next);
            }
            blocks
        };
        let blocks = draw(7);
        for pair in blocks.chunks(2) {
            assert_eq!(
                pair[0].iter().rev().collect::<Vec<_>>(),
                pair[1].iter().collect::<Vec<_>>()
            );
        }
        assert_eq!(draw(7), blocks, "the same seed, the same orders");
        let firsts: std::collections::HashSet<Vec<Vec<usize>>> = (0..16).map(draw).collect();
        assert!(firsts.len() > 1, "different seeds draw different orders");
        // A scenario that is done drops out; the rest keep going.
        let mut o = Orders::new(1);
        let first = o.next(&[0, 1, 2], None);
        let next = o.next(&[0, 2], Some(&first));
        assert!(same_members(&next, &[0, 2]));
    }
}
