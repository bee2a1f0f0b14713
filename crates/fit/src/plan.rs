//! The measurement plan: plain fio job files, one per measurement, sized from the drive's
//! capacity, and a manifest saying what each identifies, what it writes, how long it takes
//! on a real drive and whether it destroys data.

use serde::{Deserialize, Serialize};

use crate::FitError;

/// The manifest's file name in a plan directory.
pub const MANIFEST: &str = "manifest.json";
/// The manifest's format tag: a manifest of another format is refused.
pub const FORMAT: &str = "flashlab-fit-plan 1";

/// Random-read queue depths of the depth scan.
pub const READ_DEPTHS: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];
/// Block sizes (KiB) of the block-size scan at QD32 (4 KiB is `randread-qd32`).
pub const READ_BLOCKS_KIB: [u32; 5] = [8, 16, 32, 64, 128];
/// The write rate beside the read-tail job's reads, bytes per second.
pub const BESIDE_WRITE_RATE: u64 = 32 << 20;
/// I/Os of the mixed read and write job: few enough that its writes stay in the cache of a
/// 256 MiB drive, many enough for a read p99 of some hundred samples.
pub const MIXED_IOS: u64 = 20_000;
/// I/Os of the shallow mixed job on the filled drive: its writes (about 12 MiB) stay well
/// inside the spare area of a 256 MiB drive, so GC has not started when it ends.
pub const MIXED_FILLED_IOS: u64 = 6_000;
/// 4 KiB writes of the QD1 write job, which runs on the trimmed drive before the fill: the
/// fill finds their 16 MiB in the cache already.
pub const QD1_WRITE_IOS: u64 = 4096;
/// Bytes the plan writes between the trim and the fill.
pub const BEFORE_FILL_BYTES: u64 = QD1_WRITE_IOS * 4096;
/// Smallest and largest capacity a plan is made for.
pub const MIN_CAPACITY: u64 = 256 << 20;
pub const MAX_CAPACITY: u64 = 1 << 50;

/// The reference rates behind the manifest's time estimates: a mid-range TLC drive.
const EST_SEQ_WRITE_BYTES_S: f64 = 300e6;
const EST_SEQ_READ_BYTES_S: f64 = 2e9;
const EST_STEADY_IOPS: f64 = 20e3;
const EST_QD1_READ_S: f64 = 100e-6;
const EST_MAX_READ_IOPS: f64 = 500e3;

/// One measurement: a job file run on its own, in plan order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanJob {
    pub name: String,
    /// The job file's name in the plan directory.
    pub file: String,
    /// What the fit reads from it.
    pub identifies: String,
    /// The files a run of it writes in the plan directory: fio's JSON, then its logs.
    pub outputs: Vec<String>,
    /// Estimated time on a real drive at the reference rates, seconds.
    pub est_seconds: u64,
    /// It writes (or trims) the target: the data on it is lost.
    pub destructive: bool,
    #[serde(skip)]
    pub text: String,
}

/// The whole plan for one capacity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub format: String,
    pub capacity_bytes: u64,
    /// How to run it with fio.
    pub run: String,
    /// The rates the time estimates assume.
    pub estimates_assume: String,
    pub jobs: Vec<PlanJob>,
}

/// The log averaging interval of the whole-capacity write's bandwidth log: 5 ms per GiB of
/// capacity, so the log holds about two hundred points a GB/s of the fill's mean rate
/// whatever the drive's size, and a cache of a twentieth of the capacity written at 3 GB/s
/// spans some ten samples: the in-cache rate is the median of the first five, which a
/// cache of fewer samples would mix with the rate past it.
pub fn fill_log_msec(capacity_bytes: u64) -> u64 {
    (capacity_bytes >> 30).saturating_mul(5).clamp(5, 2000)
}

/// The steady-state write's IOPS log interval: about a hundred points over the job.
fn steady_log_msec(capacity_bytes: u64) -> u64 {
    (capacity_bytes >> 30)
        .saturating_mul(100)
        .clamp(100, 20_000)
}

/// Sizes in whole 4 KiB blocks, which every logical block size divides.
fn block_floor(bytes: u64) -> u64 {
    bytes & !4095
}

struct Spec {
    name: String,
    identifies: &'static str,
    body: String,
    logs: Vec<String>,
    est_seconds: f64,
    destructive: bool,
}

impl Plan {
    /// The plan for a drive of `capacity_bytes` (rounded down to whole 4 KiB).
    pub fn new(capacity_bytes: u64) -> Result<Plan, FitError> {
        if !(MIN_CAPACITY..=MAX_CAPACITY).contains(&capacity_bytes) {
            return Err(FitError::bad(
                "--capacity",
                format!(
                    "{capacity_bytes} bytes: a plan is made for 256 MiB to 1 PiB (e.g. --capacity 64GB)"
                ),
            ));
        }
        let c = block_floor(capacity_bytes);
        let mut specs = Vec::new();
        let mut writes = write_specs(c);
        let mut buffers = buffer_specs();
        // The QD1 write runs on the fresh drive (its latency is the write path's, not a full
        // drive's GC); the read tail beside writes runs on the filled drive before any
        // random write (its writes then need no GC).
        let beside = buffers.pop();
        specs.push(writes.remove(0));
        specs.push(buffers.remove(0));
        specs.extend(writes);
        specs.extend(read_specs(c));
        specs.extend(beside);
        specs.push(mixed_spec(c, 4, MIXED_FILLED_IOS, "how dies x planes split into dies, before GC: 4 KiB random 50/50 reads and writes at QD4 on the filled drive (IOPS and read p99; a program holds its whole die)"));
        specs.push(gc_onset_spec(c));
        specs.push(mixed_spec(c, 16, MIXED_IOS, "how dies x planes split into dies: 4 KiB random 50/50 reads and writes at QD16 (IOPS and read p99; a program holds its whole die)"));
        specs.extend(buffers);
        specs.extend(steady_specs(c));
        specs.extend(chunk_specs(c));
        let jobs = specs.into_iter().map(|s| s.job(c)).collect();
        Ok(Plan {
            format: FORMAT.into(),
            capacity_bytes: c,
            run: "in this directory, in this order: fio --filename=TARGET --output-format=json --output=NAME.json NAME.fio".into(),
            estimates_assume: "a mid-range TLC drive: sequential write 300 MB/s, sequential read 2 GB/s, QD1 read 100 us, 500k read IOPS, 20k steady random-write IOPS".into(),
            jobs,
        })
    }

    /// The manifest as JSON text.
    pub fn manifest_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Total estimated time on a real drive, seconds.
    pub fn est_seconds(&self) -> u64 {
        self.jobs.iter().map(|j| j.est_seconds).sum()
    }

    /// The job named `name`.
    pub fn job(&self, name: &str) -> Option<&PlanJob> {
        self.jobs.iter().find(|j| j.name == name)
    }
}

impl Spec {
    fn job(self, capacity_bytes: u64) -> PlanJob {
        let json = format!("{}.json", self.name);
        let mut text = format!(
            "# flashlab fit plan, {} bytes: {}\n# It identifies: {}.\n",
            capacity_bytes, self.name, self.identifies
        );
        if self.destructive {
            text.push_str("# It writes the target: the data on it is lost.\n");
        }
        text.push_str(&self.body);
        let mut outputs = vec![json];
        outputs.extend(self.logs);
        PlanJob {
            file: format!("{}.fio", self.name),
            name: self.name,
            identifies: self.identifies.into(),
            outputs,
            est_seconds: self.est_seconds.ceil() as u64,
            destructive: self.destructive,
            text,
        }
    }
}

/// A job section with the plan's common options.
fn section(name: &str, options: &[(&str, String)]) -> String {
    let mut s = format!("[{name}]\nioengine=libaio\ndirect=1\n");
    for (k, v) in options {
        s.push_str(&format!("{k}={v}\n"));
    }
    s
}

fn o(key: &'static str, value: impl ToString) -> (&'static str, String) {
    (key, value.to_string())
}

fn write_specs(c: u64) -> Vec<Spec> {
    let c_f = c as f64;
    let quarter = block_floor(c / 4);
    vec![
        Spec {
            name: "trim".into(),
            identifies: "nothing: it returns the drive to its fresh state for the cache measurement",
            body: section("trim", &[o("rw", "trim"), o("bs", "1m"), o("size", c)]),
            logs: vec![],
            est_seconds: 10.0 + c_f / 10e9,
            destructive: true,
        },
        Spec {
            name: "seq-fill".into(),
            identifies: "the SLC cache: its size (where the bandwidth log falls), the in-cache rate (SLC program time) and the post-cache rate (native program time), and the fold policy",
            body: section(
                "seq-fill",
                &[o("rw", "write"), o("bs", "128k"), o("iodepth", 32), o("size", c),
                  o("write_bw_log", "seq-fill"), o("log_avg_msec", fill_log_msec(c))],
            ),
            logs: vec!["seq-fill_bw.1.log".into()],
            est_seconds: c_f / EST_SEQ_WRITE_BYTES_S,
            destructive: true,
        },
        Spec {
            name: "idle-recovery".into(),
            identifies: "idle recovery: how much of the cache is back after 30 s idle (the bandwidth log of a write of a quarter of the capacity)",
            body: section(
                "idle-recovery",
                &[o("rw", "write"), o("bs", "128k"), o("iodepth", 32), o("size", quarter),
                  o("startdelay", "30s"), o("write_bw_log", "idle-recovery"),
                  o("log_avg_msec", fill_log_msec(c))],
            ),
            logs: vec!["idle-recovery_bw.1.log".into()],
            est_seconds: 30.0 + quarter as f64 / EST_SEQ_WRITE_BYTES_S,
            destructive: true,
        },
    ]
}

fn read_specs(c: u64) -> Vec<Spec> {
    let mut specs = Vec::new();
    for qd in READ_DEPTHS {
        let ios = 20_000 + 200 * qd as u64;
        let iops = (qd as f64 / EST_QD1_READ_S).min(EST_MAX_READ_IOPS);
        let name = format!("randread-qd{qd}");
        specs.push(Spec {
            name: name.clone(),
            identifies: if qd == 1 {
                "the read path: QD1 4 KiB read latency (command overhead, link, tR)"
            } else {
                "parallelism: 4 KiB random-read IOPS over queue depth (its saturation is dies x planes / tR)"
            },
            body: section(
                &name,
                &[o("rw", "randread"), o("bs", "4k"), o("iodepth", qd), o("size", c),
                  o("number_ios", ios)],
            ),
            logs: vec![],
            est_seconds: ios as f64 / iops,
            destructive: false,
        });
    }
    for kib in READ_BLOCKS_KIB {
        let name = format!("randread-bs{kib}k");
        specs.push(Spec {
            name: name.clone(),
            identifies: "parallelism over block size: QD32 random reads of 8 to 128 KiB (pages per read, plane and channel limits)",
            body: section(
                &name,
                &[o("rw", "randread"), o("bs", format!("{kib}k")), o("iodepth", 32),
                  o("size", c), o("number_ios", 20_000)],
            ),
            logs: vec![],
            est_seconds: 20_000.0 * (kib as f64 * 1024.0) / EST_SEQ_READ_BYTES_S + 1.0,
            destructive: false,
        });
    }
    let read_bytes = block_floor(c.min(4 << 30));
    specs.push(Spec {
        name: "seq-read".into(),
        identifies: "the link and read data path: 128 KiB sequential read at QD32",
        body: section(
            "seq-read",
            &[
                o("rw", "read"),
                o("bs", "128k"),
                o("iodepth", 32),
                o("size", read_bytes),
            ],
        ),
        logs: vec![],
        est_seconds: read_bytes as f64 / EST_SEQ_READ_BYTES_S,
        destructive: false,
    });
    specs
}

fn buffer_specs() -> Vec<Spec> {
    let beside = format!(
        "{}{}",
        section(
            "reader",
            &[
                o("rw", "randread"),
                o("bs", "4k"),
                o("iodepth", 4),
                o("runtime", "5s"),
                o("time_based", 1)
            ],
        ),
        section(
            "writer",
            &[
                o("rw", "write"),
                o("bs", "128k"),
                o("iodepth", 1),
                o("runtime", "5s"),
                o("time_based", 1),
                o("rate", BESIDE_WRITE_RATE)
            ],
        )
    );
    vec![
        Spec {
            name: "qd1-write".into(),
            identifies: "the write path: QD1 4 KiB sequential write latency on the fresh drive (command overhead, link, write buffer)",
            body: section(
                "qd1-write",
                &[o("rw", "write"), o("bs", "4k"), o("iodepth", 1), o("number_ios", QD1_WRITE_IOS)],
            ),
            logs: vec![],
            est_seconds: 2.0,
            destructive: true,
        },
        Spec {
            name: "write-buffer".into(),
            identifies: "the write buffer: after 5 s idle, how many 4 KiB QD32 writes complete at buffer speed (the per-I/O latency log)",
            body: section(
                "write-buffer",
                &[o("rw", "randwrite"), o("bs", "4k"), o("iodepth", 32), o("startdelay", "5s"),
                  o("number_ios", 65_536), o("write_lat_log", "write-buffer"),
                  o("log_avg_msec", 0)],
            ),
            logs: vec![
                "write-buffer_lat.1.log".into(),
                "write-buffer_slat.1.log".into(),
                "write-buffer_clat.1.log".into(),
            ],
            est_seconds: 10.0,
            destructive: true,
        },
        Spec {
            name: "read-under-write".into(),
            identifies: "reads beside writes: the QD4 4 KiB read tail (p99) beside a 32 MiB/s sequential write (read priority, program suspend)",
            body: beside,
            logs: vec![],
            est_seconds: 5.0,
            destructive: true,
        },
    ]
}

/// Random 50/50 reads and writes of 4 KiB at `depth`, `ios` of them. A program holds its
/// whole die, so with the same dies × planes a drive of fewer, wider dies blocks more reads
/// behind each program: the mix's IOPS and read p99 tell the split of the parallel units
/// that the read-only scans cannot. The plan runs two: at QD4 on the drive the fill left
/// full, before GC, where a die's program is seldom joined by the writes to its other planes
/// before it starts and the splits' IOPS differ by a quarter or more; and at QD16 after
/// `gc-onset`, during GC, where they differ by a few percent.
fn mixed_spec(c: u64, depth: u32, ios: u64, identifies: &'static str) -> Spec {
    let name = format!("mixed-qd{depth}");
    Spec {
        body: section(
            &name,
            &[
                o("rw", "randrw"),
                o("rwmixread", 50),
                o("bs", "4k"),
                o("iodepth", depth),
                o("size", c),
                o("number_ios", ios),
            ],
        ),
        name,
        identifies,
        logs: vec![],
        est_seconds: ios as f64 / EST_STEADY_IOPS,
        destructive: true,
    }
}

/// The gc-onset job's IOPS log interval: about 4 ms per GiB of capacity, so the log
/// resolves where the rate falls to a small share of the spare area.
fn gc_onset_log_msec(capacity_bytes: u64) -> u64 {
    (capacity_bytes >> 30).saturating_mul(4).clamp(4, 1000)
}

/// 4 KiB random writes on the drive the fill left full: they run on the free blocks of the
/// spare area until GC must reclaim, and GC starts when the free blocks fall to the FTL's
/// held-back count, so at the same spare the bytes written before the rate falls are fewer
/// the larger the erase block. The steady jobs measure the spare; this one the block.
fn gc_onset_spec(c: u64) -> Spec {
    let bytes = block_floor(c / 2);
    Spec {
        name: "gc-onset".into(),
        identifies: "the erase block: 4 KiB random writes at QD32 on the filled drive with a fine IOPS log; the bytes written before the rate falls (GC starts when the free blocks reach the FTL's held-back count, so fewer bytes the larger the block at the same spare)",
        body: section(
            "gc-onset",
            &[o("rw", "randwrite"), o("bs", "4k"), o("iodepth", 32), o("size", c),
              o("io_size", bytes), o("write_iops_log", "gc-onset"),
              o("log_avg_msec", gc_onset_log_msec(c))],
        ),
        logs: vec!["gc-onset_iops.1.log".into()],
        est_seconds: bytes as f64 / 4096.0 / EST_STEADY_IOPS,
        destructive: true,
    }
}

fn steady_specs(c: u64) -> Vec<Spec> {
    let half = block_floor(c / 2);
    let log = steady_log_msec(c);
    vec![
        Spec {
            name: "steady-full".into(),
            identifies: "the effective spare area and GC: steady 4 KiB random-write IOPS over the whole capacity (write amplification of greedy GC), and how it settles",
            body: section(
                "steady-full",
                &[o("rw", "randwrite"), o("bs", "4k"), o("iodepth", 32), o("size", c),
                  o("io_size", 3 * c), o("write_iops_log", "steady-full"), o("log_avg_msec", log)],
            ),
            logs: vec!["steady-full_iops.1.log".into()],
            est_seconds: 3.0 * c as f64 / 4096.0 / EST_STEADY_IOPS,
            destructive: true,
        },
        Spec {
            name: "steady-half".into(),
            identifies: "GC at a reduced span: steady 4 KiB random-write IOPS over half the capacity, the other half cold (a second point of write amplification over spare)",
            body: section(
                "steady-half",
                &[o("rw", "randwrite"), o("bs", "4k"), o("iodepth", 32), o("size", half),
                  o("io_size", 3 * half), o("write_iops_log", "steady-half"),
                  o("log_avg_msec", log)],
            ),
            logs: vec!["steady-half_iops.1.log".into()],
            est_seconds: 3.0 * half as f64 / 4096.0 / (2.0 * EST_STEADY_IOPS),
            destructive: true,
        },
    ]
}

/// The chunk of the chunked random writes: a 256th of the capacity in whole MiB (at least
/// one), about the size of a superblock (an erase block on every parallel unit) of a drive
/// of a few hundred blocks per plane, so most drives' superblocks hold a few chunks.
pub fn chunk_bytes(capacity_bytes: u64) -> u64 {
    ((capacity_bytes / 256) & !((1 << 20) - 1)).max(1 << 20)
}

/// Random writes of whole chunks, each written in order: the drive lays a chunk's pages
/// down together, so a later write of the chunk frees them together, and GC copies only
/// what the superblock holds of other chunks. The fewer chunks a superblock holds, the less
/// GC copies: at the spare the 4 KiB steady state measured, the rate tells the erase block,
/// which the 4 KiB writes cannot tell from the spare. The first job settles the drive (one
/// and a half capacities), the second measures (half a capacity).
fn chunk_specs(c: u64) -> Vec<Spec> {
    let chunk = chunk_bytes(c);
    let job = |name: &str, bytes: u64| {
        section(
            name,
            &[
                o("rw", "randwrite"),
                o("bs", chunk),
                o("iodepth", 1),
                o("size", c),
                o("io_size", block_floor(bytes) / chunk * chunk),
            ],
        )
    };
    vec![
        Spec {
            name: "chunk-settle".into(),
            identifies: "nothing on its own: it brings the drive to the chunked writes' steady state for chunk-write",
            body: job("chunk-settle", c + c / 2),
            logs: vec![],
            est_seconds: 1.5 * c as f64 / EST_SEQ_WRITE_BYTES_S * 2.0,
            destructive: true,
        },
        Spec {
            name: "chunk-write".into(),
            identifies: "the erase block: the steady rate of random writes of whole chunks (a 256th of the capacity each, written in order), which GC copies less the fewer chunks a superblock holds",
            body: job("chunk-write", c / 2),
            logs: vec![],
            est_seconds: 0.5 * c as f64 / EST_SEQ_WRITE_BYTES_S * 2.0,
            destructive: true,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_sized_from_its_capacity() {
        let plan = Plan::new(1 << 30).unwrap();
        let fill = plan.job("seq-fill").unwrap();
        assert!(fill.text.contains("size=1073741824\n"), "{}", fill.text);
        assert!(fill.destructive);
        assert_eq!(fill.outputs, ["seq-fill.json", "seq-fill_bw.1.log"]);
        let half = plan.job("steady-half").unwrap();
        assert!(half.text.contains("size=536870912\n"));
        assert!(!plan.job("randread-qd256").unwrap().destructive);
        assert!(plan.est_seconds() > 0);
    }

    #[test]
    fn every_job_file_parses_and_names_its_section() {
        let plan = Plan::new(3 << 30).unwrap();
        for job in &plan.jobs {
            let parsed = flashlab_workload::parse_str(&job.text, &job.file, &|_| None)
                .unwrap_or_else(|e| panic!("{}: {e}", job.file));
            assert!(
                parsed.jobs.iter().any(|j| j.id.name == job.name) || job.name == "read-under-write"
            );
        }
    }

    #[test]
    fn a_capacity_out_of_range_is_refused() {
        assert!(Plan::new(1 << 20).is_err());
    }
}
