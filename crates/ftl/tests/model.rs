//! Random operation sequences against a shadow model of what every read must return.
//!
//! The model keeps, per logical IU, the version a read returns now (`cur`) and the version
//! that survives a power loss without PLP (`durable`). A write becomes durable when its page
//! is programmed: the model learns that from reads (an IU no longer `Buffered` is on NAND),
//! and independently bounds it: at most two open pages (host and SLC) of IUs may be buffered,
//! none after a flush, none ever with one IU per page.

use flashlab_ftl::{
    Ftl, FtlConfig, GcConfig, GcUnit, NandOp, ReadLocation, SlcConfig, VictimPolicy, WearOut,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Write {
        first: u32,
        count: u32,
        head: bool,
        tail: bool,
    },
    /// Many single-IU writes, 3 in 4 into a hot tenth of the drive (so blocks wear unevenly).
    Burst {
        seed: u64,
        n: u32,
    },
    Trim {
        first: u32,
        count: u32,
    },
    Read {
        lpn: u32,
    },
    Flush,
    Background {
        steps: u32,
    },
    /// The device's data refresh rewrites a block (any id: most are not closed data).
    Refresh {
        block: u32,
    },
    PowerLoss,
    Format,
    /// A compressing controller's write of compression unit `unit` (of [`SPAN`] IUs), its
    /// data stored in `stored` of them, the rest deallocated.
    Compressed {
        unit: u32,
        stored: u32,
        partial: bool,
    },
}

/// IUs per compression unit in [`Op::Compressed`].
const SPAN: u32 = 4;

#[derive(Debug, Clone)]
struct Flavour {
    ius_per_page: u32,
    plp: bool,
    static_slc: u32,
    dynamic_slc: bool,
    policy: VictimPolicy,
    unit: GcUnit,
    wear_level_threshold: u32,
    /// Pages per parity stripe (0: no parity).
    parity: u32,
    /// Blocks set aside for bad blocks.
    bad: u32,
    /// Blocks fail with wear, fast (see [`FAST_WEAR`]).
    wear: bool,
}

/// A wear-out so fast that short runs retire blocks: 30% failed by 8 erases.
const FAST_WEAR: WearOut = WearOut {
    rated_pe_cycles: 8,
    failed_at_rated: 0.3,
    shape: 2.0,
    seed: 7,
};

fn config(f: &Flavour) -> FtlConfig {
    let (dies, planes, blocks_per_plane, pages_per_block) = (2, 2, 32, 8);
    let native_ius = (dies * planes * blocks_per_plane - f.static_slc - f.bad)
        * flashlab_ftl::data_pages(pages_per_block, f.parity)
        * f.ius_per_page;
    FtlConfig {
        dies,
        planes_per_die: planes,
        blocks_per_plane,
        pages_per_block,
        ius_per_page: f.ius_per_page,
        iu_bytes: 4096,
        bits_per_cell: 2,
        user_ius: u64::from(native_ius * 3 / 5),
        gc: GcConfig {
            policy: f.policy,
            unit: f.unit,
            foreground_free_blocks: 3,
            background_free_blocks: 12,
        },
        slc: SlcConfig {
            static_blocks: f.static_slc,
            dynamic: f.dynamic_slc,
            dynamic_max_fraction: 0.3,
            fold_when_full: false,
        },
        wear_level_threshold: f.wear_level_threshold,
        parity_stripe_pages: f.parity,
        bad_blocks: f.bad,
        wear_out: if f.wear { FAST_WEAR } else { WearOut::NEVER },
        power_loss_protection: f.plp,
        track_versions: true,
        fdp: None,
    }
}

fn flavour() -> impl Strategy<Value = Flavour> {
    (
        prop_oneof![Just(1u32), Just(2), Just(4)],
        any::<bool>(),
        prop_oneof![Just(0u32), Just(4)],
        any::<bool>(),
        prop_oneof![Just(VictimPolicy::Greedy), Just(VictimPolicy::CostBenefit)],
        prop_oneof![Just(GcUnit::Block), Just(GcUnit::Superblock)],
        prop_oneof![Just(0u32), Just(3)],
        // A stripe that divides the block's pages (native 8, SLC 4) and one that does not.
        prop_oneof![2 => Just(0u32), 1 => Just(3), 1 => Just(4)],
        // Set aside for bad blocks: none, or 5 of the 128 (one unit loses two).
        prop_oneof![Just(0u32), Just(5)],
        any::<bool>(),
    )
        .prop_map(
            |(
                ius_per_page,
                plp,
                static_slc,
                dynamic_slc,
                policy,
                unit,
                wear_level_threshold,
                parity,
                bad,
                wear,
            )| {
                Flavour {
                    ius_per_page,
                    plp,
                    static_slc,
                    dynamic_slc,
                    policy,
                    unit,
                    wear_level_threshold,
                    parity,
                    bad,
                    wear,
                }
            },
        )
}

fn op(user: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..user, 1u32..24, any::<bool>(), any::<bool>()).prop_map(move |(first, count, head, tail)| Op::Write {
            first,
            count: count.min(user - first),
            head,
            tail
        }),
        3 => (any::<u64>(), 50u32..600).prop_map(|(seed, n)| Op::Burst { seed, n }),
        2 => (0..user, 1u32..40).prop_map(move |(first, count)| Op::Trim { first, count: count.min(user - first) }),
        2 => (0..user).prop_map(|lpn| Op::Read { lpn }),
        2 => Just(Op::Flush),
        2 => (1u32..40).prop_map(|steps| Op::Background { steps }),
        1 => (0u32..200).prop_map(|block| Op::Refresh { block }),
        2 => Just(Op::PowerLoss),
        1 => Just(Op::Format),
        4 => (0..user / SPAN, 1..=SPAN, any::<bool>()).prop_map(|(unit, stored, partial)| Op::Compressed { unit, stored, partial }),
    ]
}

struct Model {
    cur: Vec<Option<u32>>,
    durable: Vec<Option<u32>>,
    /// IUs whose latest write may still sit in an unprogrammed page.
    pending: Vec<u32>,
    version: u32,
    /// Deallocations by compressed writes not yet durable: (last stored IU, deallocated IU,
    /// version of the write); durable once that version of the stored IU is.
    trims: Vec<(u32, u32, u32)>,
    /// Compressed units not yet committed, by their stored IUs: all durable at once, when
    /// none of them is buffered any more (the page of the last one is programmed).
    units: Vec<Vec<u32>>,
}

impl Model {
    fn write(&mut self, lpn: u32) {
        self.trims.retain(|t| t.1 != lpn);
        self.cur[lpn as usize] = Some(self.version);
        if !self.pending.contains(&lpn) {
            self.pending.push(lpn);
        }
    }

    /// Learn which pending writes have reached NAND.
    fn settle(&mut self, ftl: &mut Ftl, max_buffered: usize) {
        let (cur, durable) = (&self.cur, &mut self.durable);
        self.pending.retain(|&lpn| {
            let buffered = ftl.read(lpn) == ReadLocation::Buffered;
            if !buffered {
                durable[lpn as usize] = cur[lpn as usize];
            }
            buffered
        });
        let (cur, durable) = (&self.cur, &mut self.durable);
        self.units.retain(|lpns| {
            let committed = lpns.iter().all(|&l| ftl.read(l) != ReadLocation::Buffered);
            if committed {
                for &l in lpns {
                    durable[l as usize] = cur[l as usize];
                }
            }
            !committed
        });
        self.trims.retain(|&(head, lpn, v)| {
            let done = durable[head as usize].is_some_and(|d| d >= v);
            if done {
                durable[lpn as usize] = None;
            }
            !done
        });
        assert!(
            self.pending.len() <= max_buffered,
            "{} IUs buffered, at most {max_buffered} fit the open pages",
            self.pending.len()
        );
    }

    fn all_durable(&mut self) {
        self.durable.clone_from(&self.cur);
        self.pending.clear();
        self.trims.clear();
        self.units.clear();
    }

    /// Whether IUs `[first, first + count)` hold part of a compressed unit not yet committed.
    fn touches_open_unit(&self, first: u32, count: u32) -> bool {
        self.units
            .iter()
            .any(|u| u.iter().any(|l| (first..first + count).contains(l)))
    }

    /// Commit every compressed unit before an operation that would change one of its IUs
    /// (what the drive then does is checked by the FTL's unit tests, not here).
    fn commit_units_in(&mut self, ftl: &mut Ftl, nand: &mut Vec<NandOp>, first: u32, count: u32) {
        if self.touches_open_unit(first, count) {
            ftl.flush(nand);
            self.settle(ftl, 0);
            assert!(self.units.is_empty());
        }
    }
}

fn run(f: &Flavour, ops: &[Op]) -> Ftl {
    let cfg = config(f);
    let user = cfg.user_ius as u32;
    let ipp = cfg.ius_per_page as usize;
    let slc = f.static_slc > 0 || f.dynamic_slc;
    let max_buffered = if slc { 2 * (ipp - 1) } else { ipp - 1 };
    let mut ftl = Ftl::new(cfg).unwrap();
    let mut m = Model {
        cur: vec![None; user as usize],
        durable: vec![None; user as usize],
        pending: Vec::new(),
        version: 0,
        trims: Vec::new(),
        units: Vec::new(),
    };
    let mut nand = Vec::new();
    for op in ops {
        m.version += 1;
        // A drive whose blocks failed beyond its spare refuses writes (the device answers
        // them with an error): they change nothing.
        if ftl.read_only() && matches!(op, Op::Write { .. } | Op::Burst { .. }) {
            continue;
        }
        match *op {
            Op::Write {
                first,
                count,
                head,
                tail,
            } if f.plp => {
                ftl.write(first, count, head, tail, m.version, &mut nand);
                (first..first + count).for_each(|lpn| m.write(lpn));
            }
            Op::Write {
                first,
                count,
                head,
                tail,
            } => {
                // One IU per call, so the model sees each page reach NAND (an earlier version
                // may become durable just before a later write shadows it).
                m.commit_units_in(&mut ftl, &mut nand, first, count);
                for lpn in first..first + count {
                    let (h, t) = (head && lpn == first, tail && lpn + 1 == first + count);
                    ftl.write(lpn, 1, h, t, m.version, &mut nand);
                    m.write(lpn);
                    m.settle(&mut ftl, max_buffered);
                }
            }
            Op::Burst { seed, n } => {
                let mut x = seed | 1;
                for _ in 0..n {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let lpn = if x % 4 == 0 {
                        (x >> 8) % u64::from(user)
                    } else {
                        (x >> 8) % u64::from(user / 10)
                    } as u32;
                    if ftl.read_only() {
                        break;
                    }
                    if !f.plp {
                        m.commit_units_in(&mut ftl, &mut nand, lpn, 1);
                    }
                    m.version += 1;
                    ftl.write(lpn, 1, false, false, m.version, &mut nand);
                    m.write(lpn);
                    m.settle(&mut ftl, max_buffered);
                }
            }
            Op::Trim { first, count } => {
                if !f.plp {
                    m.commit_units_in(&mut ftl, &mut nand, first, count);
                }
                ftl.trim(first, count);
                for lpn in first..first + count {
                    m.cur[lpn as usize] = None;
                    m.durable[lpn as usize] = None;
                }
                m.pending.retain(|&l| !(first..first + count).contains(&l));
                m.trims.retain(|t| !(first..first + count).contains(&t.1));
            }
            Op::Read { lpn } => {
                let loc = ftl.read(lpn);
                assert_eq!(
                    loc == ReadLocation::Unmapped,
                    m.cur[lpn as usize].is_none(),
                    "IU {lpn}: {loc:?}"
                );
            }
            Op::Flush => {
                ftl.flush(&mut nand);
                m.settle(&mut ftl, 0);
            }
            Op::Background { steps } => {
                for _ in 0..steps {
                    if !ftl.background_step(&mut nand) {
                        break;
                    }
                }
            }
            Op::Refresh { block } => {
                // Moves a closed block's data elsewhere, or does nothing: the reads after it
                // check that every IU still returns what was written last.
                let moved = ftl.counters().refreshed_ius;
                if !ftl.refresh(block, &mut nand) {
                    assert_eq!(ftl.counters().refreshed_ius, moved);
                }
            }
            Op::PowerLoss => {
                ftl.power_loss(&mut nand);
                if f.plp {
                    m.settle(&mut ftl, 0);
                } else {
                    m.cur.clone_from(&m.durable);
                    m.pending.clear();
                    m.trims.clear();
                    m.units.clear();
                }
                m.settle(&mut ftl, 0);
            }
            Op::Compressed {
                unit,
                stored,
                partial,
            } => {
                // Without PLP a compressing drive has no SLC cache (the device refuses the
                // combination: a unit could be split between the two streams' pages).
                if !f.plp && slc {
                    continue;
                }
                let first = unit * SPAN;
                m.commit_units_in(&mut ftl, &mut nand, first, SPAN);
                if !f.plp && (first..first + SPAN).any(|l| ftl.read(l) == ReadLocation::Buffered) {
                    // An earlier version of the unit becoming durable in the middle of the
                    // write is not what this op checks: settle the unit first.
                    ftl.flush(&mut nand);
                    m.settle(&mut ftl, 0);
                }
                let placed: Option<&fn(u32) -> u64> = None;
                ftl.write_compressed(first, stored, SPAN, partial, m.version, &mut nand, placed);
                for lpn in first..first + stored {
                    m.trims.retain(|t| t.1 != lpn);
                    m.cur[lpn as usize] = Some(m.version);
                }
                if f.plp {
                    (first..first + stored).for_each(|lpn| m.write(lpn));
                } else {
                    m.units.push((first..first + stored).collect());
                }
                let head = first + stored - 1;
                for lpn in first + stored..first + SPAN {
                    m.trims.retain(|t| t.1 != lpn);
                    m.cur[lpn as usize] = None;
                    m.pending.retain(|&l| l != lpn);
                    if f.plp {
                        m.durable[lpn as usize] = None;
                    } else {
                        m.trims.push((head, lpn, m.version));
                    }
                }
                m.settle(&mut ftl, max_buffered);
            }
            Op::Format => {
                ftl.format(&mut nand);
                m.cur.fill(None);
                m.all_durable();
                assert_eq!(ftl.counters().host_write_ius, 0);
            }
        }
        m.settle(&mut ftl, if ipp == 1 { 0 } else { max_buffered });
        nand.clear();
        ftl.check_invariants();
        for lpn in 0..user {
            assert_eq!(
                ftl.read_version(lpn),
                m.cur[lpn as usize],
                "IU {lpn} after {op:?}"
            );
        }
    }
    ftl
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn reads_return_the_last_write_or_the_last_durable_one(
        f in flavour(),
        ops in (0u32..1).prop_flat_map(|_| proptest::collection::vec(op(1000), 1..60)),
    ) {
        // Ops are generated for 1000 IUs and clipped to the flavour's capacity.
        let user = config(&f).user_ius as u32;
        let clip = |op: &Op| match *op {
            Op::Write { first, count, head, tail } => {
                let first = first % user;
                Op::Write { first, count: count.min(user - first), head, tail }
            }
            Op::Trim { first, count } => {
                let first = first % user;
                Op::Trim { first, count: count.min(user - first) }
            }
            Op::Read { lpn } => Op::Read { lpn: lpn % user },
            Op::Compressed { unit, stored, partial } => Op::Compressed { unit: unit % (user / SPAN), stored, partial },
            ref other => other.clone(),
        };
        let ops: Vec<Op> = ops.iter().map(clip).collect();
        run(&f, &ops);
    }
}

/// Deterministic long run with everything on: GC, both SLC caches, wear levelling, no PLP;
/// with die-level parity when `parity` is not 0 and `bad` blocks set aside for bad blocks.
fn long_mixed_run(parity: u32, bad: u32) -> Ftl {
    long_mixed_run_with(parity, bad, false)
}

fn long_mixed_run_with(parity: u32, bad: u32, wear: bool) -> Ftl {
    let f = Flavour {
        ius_per_page: 2,
        plp: false,
        static_slc: 4,
        dynamic_slc: true,
        policy: VictimPolicy::Greedy,
        unit: GcUnit::Block,
        wear_level_threshold: 3,
        parity,
        bad,
        wear,
    };
    let mut ops = Vec::new();
    for i in 0..400u64 {
        ops.push(Op::Burst {
            seed: i * 7 + 1,
            n: 300,
        });
        ops.push(match i % 5 {
            0 => Op::Flush,
            1 => Op::PowerLoss,
            2 => Op::Background { steps: 30 },
            3 => Op::Write {
                first: (i as u32 * 37) % 850,
                count: 7,
                head: true,
                tail: true,
            },
            _ => Op::Trim {
                first: (i as u32 * 53) % 850,
                count: 5,
            },
        });
    }
    let ftl = run(&f, &ops);
    let c = ftl.counters();
    println!("{c:?}");
    // Every mechanism took part.
    assert!(c.gc_copied_ius > 0 && c.slc_folded_ius > 0 && c.wear_level_moved_ius > 0);
    assert!(c.slc_write_ius > 0 && c.slc_write_ius < c.host_write_ius && c.rmw_reads > 0);
    ftl
}

#[test]
fn long_mixed_run_without_plp() {
    let ftl = long_mixed_run(0, 0);
    let c = ftl.counters();
    assert_eq!(c.parity_program_pages, 0);
}

/// Blocks set aside for bad blocks are never written or erased, every other block is, and
/// the erase-count summary leaves them out.
#[test]
fn long_mixed_run_never_touches_the_bad_block_reserve() {
    let ftl = long_mixed_run(0, 7);
    assert_eq!(ftl.bad_blocks(), 7);
    let counts = ftl.erase_counts();
    let bad: Vec<usize> = (0..counts.len())
        .filter(|&b| ftl.is_bad_block(b as u32))
        .collect();
    assert_eq!(bad.len(), 7);
    // Spread over the four units: the lowest blocks of each, two on three units.
    let per_unit = |u: usize| bad.iter().filter(|&&b| b / 32 == u).count();
    assert_eq!((0..4).map(per_unit).collect::<Vec<_>>(), vec![2, 2, 2, 1]);
    assert!(bad.iter().all(|&b| counts[b] == 0));
    let good_min = (0..counts.len())
        .filter(|&b| !ftl.is_bad_block(b as u32))
        .map(|b| counts[b])
        .min()
        .unwrap();
    assert!(good_min > 0, "a good block was never erased");
    let s = ftl.erase_count_summary();
    assert_eq!((s.min, s.blocks), (good_min, 128 - 7));
    assert_eq!(s.sum, counts.iter().map(|&e| u64::from(e)).sum::<u64>());
}

/// With a parity page in every 4, each block fill of p pages programs floor(p / 4) parity
/// pages: exactly one per 3 data pages, up to 3 data pages short per fill (a block erased
/// or abandoned at power loss before its stripe closed).
#[test]
fn long_mixed_run_with_parity_programs_a_parity_page_per_stripe() {
    let ftl = long_mixed_run(4, 0);
    let c = ftl.counters();
    let parity = c.parity_program_pages;
    let data = c.nand_program_pages - parity;
    assert!(parity > 0);
    assert!(
        3 * parity <= data,
        "{parity} parity pages for {data} data pages"
    );
    let fills = c.erases + 128;
    assert!(
        data <= 3 * parity + 3 * fills,
        "{parity} parity pages for {data} data pages"
    );
}

/// Blocks wearing out fast: each failed erase retires its block and a reserve block of the
/// same unit takes its place; once the reserve is used up the spare shrinks, until the drive
/// turns read-only. Every read returns the last write throughout (`run` checks after every
/// operation), and format keeps the retired blocks retired.
#[test]
fn worn_out_blocks_are_retired_and_replaced_until_the_drive_turns_read_only() {
    let mut ftl = long_mixed_run_with(0, 7, true);
    let w = ftl.wear_state();
    println!("{w:?}");
    assert!(w.read_only, "{w:?}");
    assert_eq!(w.reserve_left_blocks, 0);
    assert_eq!(w.available_spare_percent, 0);
    assert!(w.good_native_blocks < w.min_native_blocks);
    let counts = ftl.erase_counts().to_vec();
    let out: Vec<u32> = (0..128).filter(|&b| ftl.is_bad_block(b)).collect();
    // The whole reserve went into service: what is out now is what failed.
    assert_eq!(out.len() as u32, w.retired_blocks);
    assert!(out.iter().all(|&b| counts[b as usize] > 0));
    let mut nand = Vec::new();
    ftl.format(&mut nand);
    ftl.check_invariants();
    assert_eq!(ftl.wear_state(), w);
    let after: Vec<u32> = (0..128).filter(|&b| ftl.is_bad_block(b)).collect();
    assert_eq!(after, out);
}

/// The share of blocks failed by `n` erases follows the Weibull life the settings give.
#[test]
fn erase_failures_follow_the_weibull_life() {
    let wear = WearOut {
        rated_pe_cycles: 100,
        failed_at_rated: 0.2,
        shape: 3.0,
        seed: 11,
    };
    let blocks = 20_000u32;
    // Erases each block survives: the first failing erase's count, minus one.
    let lives: Vec<u32> = (0..blocks)
        .map(|b| (1..=400).find(|&n| wear.erase_fails(b, n)).unwrap_or(401) - 1)
        .collect();
    for (n, want) in [
        (50u32, 1.0 - (0.8f64).powf(0.125)),
        (100, 0.2),
        (150, 1.0 - 0.8f64.powf(3.375)),
    ] {
        let failed = lives.iter().filter(|&&l| l < n).count() as f64 / f64::from(blocks);
        assert!(
            (failed - want).abs() < 0.01,
            "failed by {n} erases: {failed:.4}, expected {want:.4}"
        );
    }
    assert!(lives
        .iter()
        .all(|&l| l > 0 || wear.erase_fails(0, 1) || l == 0));
    assert!(!WearOut::NEVER.erase_fails(3, 1_000_000));
}
