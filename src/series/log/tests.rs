use super::*;
use crate::clock::Mode;

const PULSE: SampleKind = SampleKind::Pulse;
const SCOPE: SampleKind = SampleKind::Scope {
    start: Mode::Fast,
    stop: Mode::Mid,
};

/// Every block's values of id `index` and `kind`, as (value, count) lists, oldest
/// block first (empty for none).
fn values(t: &SeriesLog, index: u32, kind: SampleKind) -> Vec<Vec<(u64, u64)>> {
    t.blocks()
        .blocks
        .iter()
        .map(|b| {
            b.entries
                .iter()
                .filter(|e| e.index == index && e.kind == kind)
                .flat_map(Entry::buckets)
                .collect()
        })
        .collect()
}

/// A log whose block 0 began at 0 ms.
fn started() -> SeriesLog {
    let mut t = SeriesLog::default();
    t.begin_fold(0);
    t
}

#[test]
fn each_fold_lands_in_the_block_it_began_in_and_gaps_are_empty_blocks() {
    let mut t = started();
    t.record(3, PULSE, &[10, 11, 10]);
    t.begin_fold(30); // still block 0
    t.record(3, PULSE, &[12]);
    t.begin_fold(50); // block 1
    t.record(3, SCOPE, &[5_003]);
    t.record(1, PULSE, &[7]);
    t.begin_fold(260); // block 5: 2, 3, 4 passed without a fold
    t.record(3, PULSE, &[13]);
    assert_eq!(t.block_ms(), BLOCK_MS);
    assert_eq!(
        values(&t, 3, PULSE),
        [
            vec![(10, 2), (11, 1), (12, 1)],
            vec![],
            vec![],
            vec![],
            vec![],
            vec![(13, 1)],
        ]
    );
    // A bucket of width 4 (values 4,096..8,191): keyed by its lowest value.
    assert_eq!(values(&t, 3, SCOPE)[1], [(5_000, 1)]);
    assert_eq!(values(&t, 1, PULSE)[1], [(7, 1)]);
    // Entries by id, ascending.
    let blocks = t.blocks().blocks;
    let ids: Vec<u32> = blocks[1].entries.iter().map(|e| e.index).collect();
    assert_eq!(ids, [1, 3]);
    // A clock that goes back keeps the open block.
    t.begin_fold(100);
    t.record(3, PULSE, &[14]);
    assert_eq!(values(&t, 3, PULSE)[5], [(13, 1), (14, 1)]);
}

#[test]
fn past_max_blocks_blocks_merge_in_pairs_losing_nothing() {
    let mut t = started();
    // One value per block, its value the block's number (exact buckets below 2,048).
    let n = MAX_BLOCKS as u64;
    for k in 0..n {
        t.begin_fold(k * BLOCK_MS);
        t.record(0, PULSE, &[k]);
    }
    assert_eq!(
        (t.blocks().blocks.len(), t.block_ms()),
        (MAX_BLOCKS, BLOCK_MS)
    );
    t.begin_fold(n * BLOCK_MS);
    t.record(0, PULSE, &[n]);
    let merged = values(&t, 0, PULSE);
    assert_eq!(t.block_ms(), 2 * BLOCK_MS);
    assert_eq!(merged.len(), MAX_BLOCKS / 2 + 1);
    for (k, block) in merged[..MAX_BLOCKS / 2].iter().enumerate() {
        let k = 2 * k as u64;
        assert_eq!(block, &[(k, 1), (k + 1, 1)]);
    }
    assert_eq!(merged[MAX_BLOCKS / 2], [(n, 1)]);
}

#[test]
fn merges_go_on_as_the_run_goes_on() {
    let mut t = started();
    let (n, h) = (MAX_BLOCKS as u64, MAX_BLOCKS / 2);
    for k in 0..n {
        t.begin_fold(k * BLOCK_MS);
        t.record(0, PULSE, &[k]);
    }
    // Block `n` passes without a fold; `n + 1` opens: blocks twice as long, and the
    // open one is block `n / 2`.
    t.begin_fold((n + 1) * BLOCK_MS);
    t.record(0, PULSE, &[1_000]);
    let v = values(&t, 0, PULSE);
    assert_eq!((v.len(), t.block_ms()), (h + 1, 2 * BLOCK_MS));
    assert_eq!(v[h], [(1_000, 1)]);
    // Blocks `h + 1 .. n` of the doubled length, one value each; then block `n` opens
    // and they merge again: blocks 4 times as long, the open one is block `n / 2`.
    for k in h as u64 + 1..n {
        t.begin_fold(k * 2 * BLOCK_MS);
        t.record(0, PULSE, &[k]);
    }
    t.begin_fold(n * 2 * BLOCK_MS + 10);
    t.record(0, PULSE, &[1_500]);
    t.begin_fold(n * 2 * BLOCK_MS + 3 * BLOCK_MS); // the same block
    t.record(0, PULSE, &[1_501]);
    let v = values(&t, 0, PULSE);
    assert_eq!((v.len(), t.block_ms()), (h + 1, 4 * BLOCK_MS));
    assert_eq!(v[h], [(1_500, 1), (1_501, 1)]);
    // Block `h / 2` holds what blocks `h` (1,000) and `h + 1` of twice the length
    // held; block 0 the first four blocks' values.
    assert_eq!(v[h / 2], [(h as u64 + 1, 1), (1_000, 1)]);
    assert_eq!(v[0], [(0, 1), (1, 1), (2, 1), (3, 1)]);
    // Every value is still there, once.
    let all: u64 = v.iter().flatten().map(|(_, c)| c).sum();
    assert_eq!(all, n + 1 + (n - h as u64 - 1) + 2);
}

#[test]
fn an_unpaired_last_block_pairs_with_an_empty_one() {
    let mut t = started();
    let (n, h) = (MAX_BLOCKS as u64, MAX_BLOCKS / 2);
    // Blocks `0 .. n - 1` closed with a value each (an odd number), then block `n + 2`
    // opens: the last closed block (`n - 2`) pairs with the empty `n - 1`.
    for k in 0..n - 1 {
        t.begin_fold(k * BLOCK_MS);
        t.record(0, PULSE, &[k]);
    }
    t.begin_fold((n + 2) * BLOCK_MS);
    t.record(0, PULSE, &[1_000]);
    let v = values(&t, 0, PULSE);
    assert_eq!((v.len(), t.block_ms()), (h + 2, 2 * BLOCK_MS));
    assert_eq!(v[h - 1], [(n - 2, 1)]);
    assert_eq!(v[h], []);
    assert_eq!(v[h + 1], [(1_000, 1)]);
    let all: u64 = v.iter().flatten().map(|(_, c)| c).sum();
    assert_eq!(all, n);
}

#[test]
fn a_long_gap_merges_before_it_adds_empty_blocks() {
    let mut t = started();
    t.record(2, PULSE, &[1]);
    // An hour later: blocks merge until the hour is fewer than `MAX_BLOCKS` of them.
    const HOUR: u64 = 3_600_000;
    t.begin_fold(HOUR);
    t.record(2, PULSE, &[2]);
    let mut block_ms = BLOCK_MS;
    while HOUR / block_ms >= MAX_BLOCKS as u64 {
        block_ms *= 2;
    }
    let v = values(&t, 2, PULSE);
    assert_eq!(t.block_ms(), block_ms);
    assert_eq!(v.len() as u64, HOUR / block_ms + 1);
    assert_eq!(v[0], [(1, 1)]);
    assert_eq!(v[v.len() - 1], [(2, 1)]);
    assert!(v[1..v.len() - 1].iter().all(Vec::is_empty));
}

#[test]
fn a_reset_drops_every_block_and_starts_again() {
    let mut t = started();
    for k in 0..(3 * MAX_BLOCKS as u64) {
        t.begin_fold(k * BLOCK_MS);
        t.record(0, PULSE, &[k]);
    }
    assert!(t.block_ms() > BLOCK_MS);
    let (_, before) = t.size();
    t.reset(100_000);
    assert_eq!((t.blocks().blocks.len(), t.block_ms()), (1, BLOCK_MS));
    assert!(t.blocks().blocks[0].entries.is_empty());
    t.begin_fold(100_000 + BLOCK_MS);
    t.record(0, PULSE, &[7]);
    assert_eq!(values(&t, 0, PULSE), [vec![], vec![(7, 1)]]);
    // The closed blocks' memory is freed; the open table's is kept for reuse.
    let (tables, after) = t.size();
    assert_eq!(tables, 1);
    assert!(after < before, "{after} < {before}");
}

#[test]
fn blocks_merge_by_id_and_kind() {
    let e = Entry::new;
    let a = Block {
        entries: vec![e(1, PULSE, &[(1, 1), (5, 2)]), e(4, SCOPE, &[(9, 1)])],
    };
    let b = Block {
        entries: vec![
            e(1, SCOPE, &[(2, 1)]),
            e(1, PULSE, &[(5, 1), (6, 1)]),
            e(2, PULSE, &[(3, 3)]),
        ],
    };
    let m = merge(&a, &b);
    assert_eq!(
        m.entries,
        [
            e(1, PULSE, &[(1, 1), (5, 3), (6, 1)]),
            e(1, SCOPE, &[(2, 1)]),
            e(2, PULSE, &[(3, 3)]),
            e(4, SCOPE, &[(9, 1)]),
        ]
    );
    assert_eq!(merge(&Block::default(), &a), a);
}
