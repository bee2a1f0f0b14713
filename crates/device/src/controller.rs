//! The controller's shared resources besides its command ceiling: the data path every host
//! transfer passes through (one per direction), and the embedded cores that run the
//! firmware's work per command and per relocated IU.
//!
//! The data path is booked like the host link, into the earliest gap from when the data is
//! ready (read data is ready out of submission order); the cores in time order. A data path slower than the link
//! (LDPC decode, DMA engines, a SATA-era controller) caps sequential throughput below link
//! and NAND; firmware time on a few cores caps the command rate of one kind (old drives'
//! random writes, which update the map on one embedded CPU). All absent: no limit, and the
//! device behaves as without a controller model.

use flashlab_engine::time::transfer_ns;
use flashlab_media::{Channel, ChannelMerge};

/// Most embedded cores a controller may have (real ones have 2-8 for the firmware).
pub const MAX_CORES: u32 = 64;

/// The controller's resources as the simulated slice has them (see `Model::controller`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ControllerModel {
    /// Data-path rate per direction, index 0 host to device (writes), 1 device to host
    /// (reads); None: unlimited.
    pub data_bytes_per_s: [Option<u64>; 2],
    /// ECC decoding of pages read in the cells' native (multi-bit) mode; None: unlimited.
    pub native_decode_bytes_per_s: Option<u64>,
    /// Firmware time of one read / one write command on one core.
    pub read_cpu_ns: u64,
    pub write_cpu_ns: u64,
    /// Firmware time per IU that GC, folding or wear levelling moves (map lookup and update).
    pub relocation_cpu_ns: u64,
    pub cores: u32,
    /// Relocation work, in IUs, that writes may run ahead of: one block's, the free space
    /// the firmware lets writes use while it still copies the last victim.
    pub relocation_allowance_ius: u64,
}

/// Direction of a host transfer through the data path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    HostToDevice = 0,
    DeviceToHost = 1,
}

/// The controller's servers: data path per direction and the cores.
#[derive(Debug, Clone)]
pub struct Controller {
    model: ControllerModel,
    /// Reserved intervals of the data path per direction.
    data: [Channel; 2],
    /// Data-path time of the last transfer size per direction: (bytes, ns).
    data_memo: [(u64, u64); 2],
    /// Reserved intervals of the LDPC decoders for native-mode pages.
    decode: Channel,
    /// Decoding time of the last native page size: (bytes, ns).
    decode_memo: (u64, u64),
    /// Free time of each core for command work (`model.cores` entries, allocated once).
    core_free_ns: Vec<u64>,
    /// When the relocation work booked so far is done. It runs on every core in the time
    /// commands leave them: a command takes a core at the next IU boundary, and delays the
    /// relocation by its own work.
    relocation_done_ns: u64,
    /// Firmware time booked so far (all cores), for the counters.
    pub cpu_busy_ns: u64,
}

flashlab_engine::impl_state!(Controller {
    data, data_memo, decode, decode_memo, core_free_ns, relocation_done_ns, cpu_busy_ns
} skip { model } fixed { core_free_ns } check Controller::check_loaded);

impl Controller {
    /// Loaded cores are free, and the relocation work done, before 2^62 ns.
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        let latest = self.core_free_ns.iter().copied().max().unwrap_or(0);
        if latest > limit || self.relocation_done_ns > limit {
            return Err(format!(
                "the controller's cores are free at {latest} ns and its relocation done at {} ns (valid: before 2^62 ns)",
                self.relocation_done_ns
            ));
        }
        Ok(())
    }

    pub fn new(model: ControllerModel) -> Controller {
        Controller {
            core_free_ns: vec![0; model.cores.max(1) as usize],
            relocation_done_ns: 0,
            model,
            data: [Channel::new(), Channel::new()],
            data_memo: [(0, 0); 2],
            // Pages book their decoding when their die is done, out of order and up to a
            // die queue ahead, as a flash channel's reads book their transfers: its near
            // future stays exact.
            decode: Channel::with_merge(ChannelMerge::Latest),
            decode_memo: (0, 0),
            cpu_busy_ns: 0,
        }
    }

    /// Duration of a host transfer of `bytes` whose link share takes `link_ns`: the data
    /// streams through link and data path together (cut-through), so it lasts as long as the
    /// slower one.
    #[inline]
    pub fn transfer_ns(&mut self, dir: Direction, bytes: u64, link_ns: u64) -> u64 {
        let d = dir as usize;
        let Some(rate) = self.model.data_bytes_per_s[d] else {
            return link_ns;
        };
        if bytes != self.data_memo[d].0 {
            self.data_memo[d] = (bytes, transfer_ns(bytes, rate));
        }
        link_ns.max(self.data_memo[d].1)
    }

    /// When a page of `bytes` read in the cells' native mode, its array read and transfer
    /// done at `done_ns`, is decoded: the decoders take it in the earliest gap from then
    /// (pages finish out of order on different dies). Unlimited: at once.
    #[inline]
    pub fn decode_native(&mut self, done_ns: u64, bytes: u64) -> u64 {
        let Some(rate) = self.model.native_decode_bytes_per_s else {
            return done_ns;
        };
        if bytes != self.decode_memo.0 {
            self.decode_memo = (bytes, transfer_ns(bytes, rate));
        }
        let dur = self.decode_memo.1;
        self.decode.book(done_ns, dur) + dur
    }

    /// Whether the data path in direction `dir` has a bandwidth of its own (else it never
    /// holds a transfer back).
    #[inline]
    pub fn limits(&self, dir: Direction) -> bool {
        self.model.data_bytes_per_s[dir as usize].is_some()
    }

    /// Earliest start from `start_ns` at which the data path is free for `dur_ns`.
    #[inline]
    pub fn fit(&self, dir: Direction, start_ns: u64, dur_ns: u64) -> u64 {
        if self.model.data_bytes_per_s[dir as usize].is_none() {
            return start_ns;
        }
        self.data[dir as usize].fit(start_ns, dur_ns)
    }

    /// Reserve the data path for `dur_ns` from `start_ns` (a start `fit` returned).
    #[inline]
    pub fn book(&mut self, dir: Direction, start_ns: u64, dur_ns: u64) {
        if self.model.data_bytes_per_s[dir as usize].is_some() {
            let s = self.data[dir as usize].book(start_ns, dur_ns);
            debug_assert_eq!(s, start_ns, "booked at a start that does not fit");
        }
    }

    /// No transfer will be asked for before `now_ns` any more.
    #[inline]
    pub fn forget_before(&mut self, now_ns: u64) {
        // An unlimited direction never books anything.
        for d in 0..2 {
            if self.model.data_bytes_per_s[d].is_some() {
                self.data[d].forget_before(now_ns);
            }
        }
        if self.model.native_decode_bytes_per_s.is_some() {
            self.decode.forget_before(now_ns);
        }
    }

    /// Firmware work of one command arriving at `at_ns`; returns when it is done. With any
    /// firmware time configured a command needs a core, even if its own kind costs nothing.
    /// Commands take the cores in arrival order; relocation work yields to them at its next
    /// IU. With none configured, the cores are not modelled.
    #[inline]
    pub fn command(&mut self, write: bool, at_ns: u64) -> u64 {
        let m = &self.model;
        if m.read_cpu_ns == 0 && m.write_cpu_ns == 0 && m.relocation_cpu_ns == 0 {
            return at_ns;
        }
        let work = if write { m.write_cpu_ns } else { m.read_cpu_ns };
        let cores = self.cores();
        let (i, free) = self.first_free_core();
        let mut start = at_ns.max(free);
        if self.relocation_done_ns > start {
            // Some core finishes the IU it is relocating.
            start = (start + m.relocation_cpu_ns.div_ceil(cores)).min(self.relocation_done_ns);
        }
        if self.relocation_done_ns > start {
            // The command's work is taken from the relocation's time.
            self.relocation_done_ns += work.div_ceil(cores);
        }
        let end = start + work;
        self.core_free_ns[i] = end;
        self.cpu_busy_ns += work;
        end
    }

    /// Firmware work for `ius` IUs relocated on behalf of a command accepted at `at_ns`. It
    /// runs on the cores between commands; writes wait for it (`write_done`).
    #[inline]
    pub fn relocated(&mut self, at_ns: u64, ius: u64) {
        if ius > 0 && self.model.relocation_cpu_ns > 0 {
            let work = ius * self.model.relocation_cpu_ns;
            let cores = self.cores();
            // It starts when a core is done with the commands before it.
            let from = at_ns.max(self.first_free_core().1);
            self.relocation_done_ns = self.relocation_done_ns.max(from) + work.div_ceil(cores);
            self.cpu_busy_ns += work;
        }
    }

    /// When a write whose media work is done at `done_ns` completes: once the relocation
    /// work is within one block of IUs of done. Firmware hands out free space only as fast as
    /// it relocates, so this is what holds writes to its rate; their media work is not
    /// delayed (the data waits in DRAM), so reads find the dies as the NAND left them.
    #[inline]
    pub fn write_done(&self, done_ns: u64) -> u64 {
        let m = &self.model;
        if m.relocation_cpu_ns == 0 {
            return done_ns;
        }
        let allowance = m.relocation_allowance_ius * m.relocation_cpu_ns / self.cores();
        done_ns.max(self.relocation_done_ns.saturating_sub(allowance))
    }

    /// How far ahead of `now_ns` the firmware's relocation work is booked.
    pub fn relocation_backlog_ns(&self, now_ns: u64) -> u64 {
        self.relocation_done_ns.saturating_sub(now_ns)
    }

    /// Cores the firmware runs on (at least one).
    fn cores(&self) -> u64 {
        u64::from(self.model.cores.max(1))
    }

    /// The core free first for command work, and when.
    fn first_free_core(&self) -> (usize, u64) {
        self.core_free_ns
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, f)| f)
            .expect("at least one core")
    }

    /// Everything idle from `at_ns` (power loss, format).
    pub fn reset(&mut self, at_ns: u64) {
        for c in &mut self.data {
            c.reset(at_ns);
        }
        self.core_free_ns.fill(at_ns);
        self.relocation_done_ns = at_ns;
    }

    pub fn model(&self) -> &ControllerModel {
        &self.model
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transfer through link and data path as the device books it.
    fn transfer(
        c: &mut Controller,
        dir: Direction,
        at: u64,
        bytes: u64,
        link_ns: u64,
    ) -> (u64, u64) {
        let dur = c.transfer_ns(dir, bytes, link_ns);
        let s = c.fit(dir, at, dur);
        c.book(dir, s, dur);
        (s, dur)
    }

    #[test]
    fn data_path_slower_than_the_link_sets_the_pace() {
        let mut c = Controller::new(ControllerModel {
            data_bytes_per_s: [Some(200_000_000), None],
            ..Default::default()
        });
        // 128 KiB at 200 MB/s = 655 us; the link's 100 us does not matter.
        let (s, d) = transfer(&mut c, Direction::HostToDevice, 0, 131_072, 100_000);
        assert_eq!((s, d), (0, 655_360));
        // The next one queues behind it, whatever the link says.
        let (s, _) = transfer(&mut c, Direction::HostToDevice, 10, 131_072, 100_000);
        assert_eq!(s, 655_360);
        // A transfer ready later than a free gap is long enough does not wait for it.
        let (s, _) = transfer(&mut c, Direction::HostToDevice, 5_000_000, 4096, 700);
        assert_eq!(s, 5_000_000);
        // One ready earlier uses the gap before it instead of queueing behind it.
        let (s, _) = transfer(&mut c, Direction::HostToDevice, 1_400_000, 4096, 700);
        assert_eq!(s, 1_400_000);
        // The other direction is unlimited: the link's time.
        assert_eq!(
            transfer(&mut c, Direction::DeviceToHost, 5, 4096, 700),
            (5, 700)
        );
    }

    #[test]
    fn cores_serve_commands_in_parallel() {
        let mut c = Controller::new(ControllerModel {
            write_cpu_ns: 100,
            cores: 2,
            ..Default::default()
        });
        assert_eq!(c.command(true, 0), 100);
        assert_eq!(c.command(true, 0), 100);
        // Both cores busy: the third waits.
        assert_eq!(c.command(true, 0), 200);
        // Reads cost nothing here but still need a core: the first free one is free at 100.
        assert_eq!(c.command(false, 7), 100);
        assert_eq!(c.cpu_busy_ns, 3 * 100);
    }

    #[test]
    fn relocation_yields_to_commands_and_holds_writes_back() {
        let mut c = Controller::new(ControllerModel {
            write_cpu_ns: 100,
            relocation_cpu_ns: 10,
            cores: 1,
            relocation_allowance_ius: 20,
            ..Default::default()
        });
        assert_eq!(c.command(true, 0), 100);
        // 100 IUs relocated for that write: the core works on them from 100 to 1,100.
        c.relocated(0, 100);
        // A read arriving meanwhile waits for the IU in progress only.
        assert_eq!(c.command(false, 300), 310);
        // So does a write, at the next IU boundary (320); its work (to 420) delays the
        // relocation to 1,200 ...
        assert_eq!(c.command(true, 300), 420);
        assert_eq!(c.relocation_backlog_ns(0), 1_200);
        // ... and the write completes once the backlog is within the allowance (20 IUs,
        // 200 ns) of done, however early its media work was done.
        assert_eq!(c.write_done(500), 1_000);
        assert_eq!(c.write_done(1_500), 1_500);
        assert_eq!(c.cpu_busy_ns, 2 * 100 + 1_000);
    }

    #[test]
    fn without_an_allowance_writes_wait_for_all_relocation_work() {
        let mut c = Controller::new(ControllerModel {
            relocation_cpu_ns: 10,
            cores: 2,
            ..Default::default()
        });
        // 30 IUs on two cores: done at 150.
        c.relocated(0, 30);
        assert_eq!(c.write_done(0), 150);
        // A command waits for one IU on either core (5 ns).
        assert_eq!(c.command(false, 0), 5);
    }
}
