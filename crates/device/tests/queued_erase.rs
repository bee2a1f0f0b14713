//! Host programs go to blocks whose erase is done. A stream slot whose unit has only free
//! blocks still waiting for their queued erases is passed over for a page (the FTL's
//! own-unit allocation), so random writes on a drive of many units never pull a queued erase
//! out of its turn. (When one does, in the FTL's last resort, only that erase and the block's
//! reads before it go to the dies: `pacing` unit tests.)

mod common;

use common::{fill_sequentially, run_qd, tiny_ssd, MANY_UNITS};
use flashlab_engine::{BlockDevice, IoRequest, RngStream};

#[test]
fn host_programs_pass_over_units_whose_free_blocks_wait_for_erases() {
    let mut d = tiny_ssd(MANY_UNITS);
    let cap = d.capacity_bytes();
    let ius = cap / 4096;
    let t = fill_sequentially(&mut d, 0);
    let mut rng = RngStream::from_seed_u64(3);
    let mut left = 2 * ius;
    run_qd(&mut d, t, 32, || {
        (left > 0).then(|| {
            left -= 1;
            IoRequest::write(rng.below(ius) * 4096, 4096)
        })
    });
    let c = d.counters_json();
    let media = &c["media"];
    let n = |k: &str| media[k].as_u64().unwrap();
    eprintln!("{media}");
    // GC ran and its erases queued behind its copies...
    assert!(
        n("erases") > 100 && n("internal_ops_held_peak") > 1000,
        "{media}"
    );
    // ...yet no host program waited for one: a slot takes a block whose erase is queued only
    // when no unit has one ready.
    assert_eq!(n("host_waits_for_queued_erase"), 0, "{media}");
    assert_eq!(n("ops_released_for_queued_erases"), 0, "{media}");
}
