//! fio's `zonemode=zbd` (fio's zbd.c): what fio itself does to a job's I/O on a zoned block
//! device, apart from what the drive does. fio keeps its own copy of each zone's write
//! pointer, moves every write to the write pointer of a zone it may write (a random write
//! goes to the pointer of the zone its offset falls in, or of another zone fio is writing
//! when the open-zone limit is reached), resets a zone before writing it again once it is
//! full (and, past `zone_reset_threshold`, every `1 / zone_reset_frequency` writes), finishes
//! a zone whose remainder is smaller than a block, keeps reads below the write pointers and
//! turns trims into zone resets. It counts the resets it issues (`nr_zone_resets`).
//!
//! On a drive without zones fio emulates them from `zonesize` (and `zonecapacity`): the same
//! rules, with no zone command sent to the drive.
//!
//! Simplifications: fio waits for a job's in-flight I/O before a reset (`io_u_quiesce`) and
//! for the reset itself; here the reset is sent at the write's issue time and the write
//! follows it at once (the drive orders them: the reset's erases hold the dies the write
//! then programs). Zones are taken out of the write-target set when the write filling them
//! is issued, not when it completes.

use flashlab_engine::{IoKind, ZoneGeometry};
use flashlab_workload::zoned::{ZoneMode, ZonedOptions};
use flashlab_workload::{BlockSize, GeneratedIo, JobSpec};

/// fio's zone state for one target, shared by every job writing it (`zbd_info`).
#[derive(Debug, Clone)]
pub(crate) struct ZbdDevice {
    pub target: usize,
    pub geometry: ZoneGeometry,
    /// The drive takes zone commands (false: zones emulated on a conventional drive).
    pub zoned: bool,
    wp: Vec<u64>,
    /// Zones fio is writing (`write_zones`, at most `max_write_zones` when that is above 0).
    write_zones: Vec<u32>,
    max_write_zones: u32,
    /// Bytes below the write pointers of the zones in the jobs' range.
    valid_bytes: u64,
    /// Writes until the next threshold reset (`write_cnt`).
    write_cnt: u32,
}

/// One job's side of fio's zone handling.
#[derive(Debug, Clone)]
pub(crate) struct ZbdJob {
    pub device: usize,
    min_zone: u32,
    max_zone: u32,
    file_offset: u64,
    io_size: u64,
    min_bs: [u64; 3],
    random: bool,
    job_max: u32,
    write_zones: u32,
    read_beyond_wp: bool,
    zrt: f64,
    zrf: f64,
    /// fio's `nr_zone_resets`.
    pub resets: u64,
}

/// A zone command fio sends before the I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZoneAction {
    Reset(u32),
    Finish(u32),
}

/// What fio does with an I/O: the adjusted I/O (None: the job has nothing left it can do,
/// fio's end of the job, unless `skip`) and the zone commands to send first.
pub(crate) struct Adjusted {
    pub io: Option<GeneratedIo>,
    pub before: [Option<ZoneAction>; 2],
    /// fio skips the I/O and counts its bytes as done (a sequential write between a zone's
    /// capacity and its end: fio jumps to the zone's end).
    pub skip: bool,
}

impl Adjusted {
    /// `io` is issued, after the zone commands `before`.
    fn issue(io: GeneratedIo, before: [Option<ZoneAction>; 2]) -> Self {
        Adjusted {
            io: Some(io),
            before,
            skip: false,
        }
    }

    /// The job has nothing left it can do (fio's end of the job), after `before`.
    fn end(before: [Option<ZoneAction>; 2]) -> Self {
        Adjusted {
            io: None,
            before,
            skip: false,
        }
    }
}

fn min_bs(bs: &BlockSize) -> u64 {
    match bs {
        BlockSize::Fixed(b) => *b,
        BlockSize::Range { min, .. } => *min,
        BlockSize::Split(parts) => parts.iter().map(|p| p.0).min().unwrap_or(512),
    }
}

fn max_bs(bs: &BlockSize) -> u64 {
    match bs {
        BlockSize::Fixed(b) => *b,
        BlockSize::Range { max, .. } => *max,
        BlockSize::Split(parts) => parts.iter().map(|p| p.0).max().unwrap_or(512),
    }
}

impl ZbdDevice {
    /// fio's zone information for a target: the drive's zones (its write pointers as fio
    /// reads them at the start), or zones emulated from the job's options.
    pub fn new(
        target: usize,
        device_zones: Option<ZoneGeometry>,
        wp: impl Fn(u32) -> u64,
        o: &ZonedOptions,
        capacity_bytes: u64,
    ) -> Result<ZbdDevice, String> {
        let (geometry, zoned) = match device_zones {
            Some(g) => {
                if o.zone_size != 0 && o.zone_size != g.zone_bytes {
                    return Err(format!(
                        "zonesize={} does not match the drive's zone size {} (fio: \"job parameter zonesize {} does not match disk zone size {}\")",
                        o.zone_size, g.zone_bytes, o.zone_size, g.zone_bytes
                    ));
                }
                (g, true)
            }
            None => {
                if o.zone_size == 0 {
                    return Err("zonemode=zbd on a drive without zones needs zonesize= (fio: \"Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd\")".to_string());
                }
                if o.zone_capacity > o.zone_size {
                    return Err(format!(
                        "zonecapacity={} is larger than zonesize={} (fio: \"job parameter zonecapacity {} is larger than zone size {}\")",
                        o.zone_capacity, o.zone_size, o.zone_capacity, o.zone_size
                    ));
                }
                if capacity_bytes < o.zone_size {
                    return Err(format!(
                        "zonesize={} is larger than the drive ({capacity_bytes} bytes)",
                        o.zone_size
                    ));
                }
                let zones = capacity_bytes / o.zone_size;
                if zones > flashlab_engine::MAX_ZONES {
                    return Err(format!(
                        "zonesize={} makes {zones} zones of the drive's {capacity_bytes} bytes, more than the {} a device may have; valid: at least {} bytes",
                        o.zone_size,
                        flashlab_engine::MAX_ZONES,
                        capacity_bytes.div_ceil(flashlab_engine::MAX_ZONES)
                    ));
                }
                let g = ZoneGeometry {
                    zone_bytes: o.zone_size,
                    capacity_bytes: if o.zone_capacity == 0 {
                        o.zone_size
                    } else {
                        o.zone_capacity
                    },
                    // At most MAX_ZONES, which fits.
                    zones: zones as u32,
                    max_open: 0,
                    max_active: 0,
                    conventional: 0,
                };
                (g, false)
            }
        };
        // fio's zbd_set_max_write_zones: only a zoned drive has a limit of its own.
        let max_write_zones = if !zoned || o.ignore_zone_limits || geometry.max_open == 0 {
            o.max_open_zones
        } else if o.max_open_zones == 0 {
            geometry.max_open
        } else if o.max_open_zones <= geometry.max_open {
            o.max_open_zones
        } else {
            return Err(format!(
                "max_open_zones={} is larger than the drive's open zone limit {} (fio: \"Specified --max_open_zones ({}) is larger than max ({})\"; ignore_zone_limits=1 allows it)",
                o.max_open_zones, geometry.max_open, o.max_open_zones, geometry.max_open
            ));
        };
        let wp = (0..geometry.zones)
            .map(|z| if zoned { wp(z) } else { 0 })
            .collect();
        Ok(ZbdDevice {
            target,
            geometry,
            zoned,
            wp,
            write_zones: Vec::with_capacity(max_write_zones as usize),
            max_write_zones,
            valid_bytes: 0,
            write_cnt: u32::MAX,
        })
    }

    /// Check that a job's options agree with the device's (fio refuses different
    /// `max_open_zones` values for one device) and set its range up.
    pub fn job(
        &mut self,
        device: usize,
        spec: &JobSpec,
        region: (u64, u64),
    ) -> Result<ZbdJob, String> {
        let o = &spec.zoned;
        let zs = self.geometry.zone_bytes;
        if o.max_open_zones > 0 && o.max_open_zones != self.max_write_zones {
            return Err(format!(
                "max_open_zones={} differs from another job's {} on the same drive (fio: \"Different 'max_open_zones' values\")",
                o.max_open_zones, self.max_write_zones
            ));
        }
        if o.job_max_open_zones > 0 && self.max_write_zones == 0 {
            return Err("job_max_open_zones needs a limit on the open zones of all jobs (fio: \"'job_max_open_zones' cannot be used without a global open zones limit\")".to_string());
        }
        let max_bs = spec.block.bs.iter().map(max_bs).max().unwrap_or(0);
        if spec.io.rw.directions()[1] && max_bs > zs {
            return Err(format!(
                "a block size of {max_bs} bytes is larger than the zone size {zs} (fio: \"I/O buflen exceeds zone size\")"
            ));
        }
        // fio's zbd_adjust_block ends such a job's writes with EIO ("zone capacity ...
        // smaller than minimum block size ...") before its first write: no write fits.
        let min_write_bs = spec.block.bs.iter().map(min_bs).min().unwrap_or(0);
        let cap = self.geometry.capacity_bytes;
        if spec.io.rw.directions()[1] && min_write_bs > cap {
            return Err(format!(
                "a block size of {min_write_bs} bytes is larger than the zone capacity {cap}: no write fits in a zone (fio: \"zone capacity {cap} smaller than minimum block size {min_write_bs}\")"
            ));
        }
        // fio's zbd_zone_align_file_sizes checks zoneskip for every job; only a sequential
        // one uses it (setup_zbd_zone_mode).
        if !o.zone_skip.is_multiple_of(zs) {
            return Err(format!(
                "zoneskip={} is not a multiple of the zone size {zs} (fio: \"zoneskip {} is not a multiple of the device zone size {zs}\")",
                o.zone_skip, o.zone_skip
            ));
        }
        let (start, len) = region;
        if o.zone_skip > 0 && !spec.io.rw.is_random() {
            if spec.io.rw.directions()[0] && !o.read_beyond_wp {
                return Err(format!(
                    "zoneskip={} with sequential reads is not simulated: fio moves such a read on at its zone's write pointer, which the job's walk does not see (read_beyond_wp=1, or zoneskip=0, is)",
                    o.zone_skip
                ));
            }
            if !start.is_multiple_of(zs) {
                return Err(format!(
                    "zoneskip={} with an offset ({start}) that is not at a zone's start is not simulated (fio first rounds the offset up to the next zone)",
                    o.zone_skip
                ));
            }
        }
        // fio's zbd_zone_align_file_sizes: the range is whole zones.
        let min_zone = start.div_ceil(zs);
        let max_zone = ((start + len) / zs).min(u64::from(self.geometry.zones));
        if max_zone <= min_zone {
            return Err(format!(
                "the job's range (offset {start}, {len} bytes) holds no whole zone of {zs} bytes (fio: \"io_size must be at least one zone\")"
            ));
        }
        let (min_zone, max_zone) = (min_zone as u32, max_zone as u32);
        // fio's zbd_verify_and_set_vdb: the data below the write pointers in the range
        // (a conventional zone has none).
        self.valid_bytes = (min_zone.max(self.geometry.conventional)..max_zone)
            .map(|z| self.wp[z as usize])
            .sum::<u64>();
        self.write_cnt = if o.zone_reset_frequency > 0.0 {
            (1.0 / o.zone_reset_frequency).min(f64::from(u32::MAX)) as u32
        } else {
            u32::MAX
        };
        Ok(ZbdJob {
            device,
            min_zone,
            max_zone,
            file_offset: min_zone as u64 * zs,
            io_size: (max_zone - min_zone) as u64 * zs,
            min_bs: [
                min_bs(&spec.block.bs[0]),
                min_bs(&spec.block.bs[1]),
                min_bs(&spec.block.bs[2]),
            ],
            random: spec.io.rw.is_random(),
            job_max: o.job_max_open_zones,
            write_zones: 0,
            read_beyond_wp: o.read_beyond_wp,
            zrt: if o.zone_reset_threshold == 0.0 {
                1.0
            } else {
                o.zone_reset_threshold
            },
            zrf: o.zone_reset_frequency,
            resets: 0,
        })
    }

    fn remainder(&self, z: u32) -> u64 {
        self.geometry.capacity_bytes - self.wp[z as usize]
    }

    /// fio's zbd_write_zone_get: whether `z` is, or may become, a zone the job writes.
    fn write_zone_get(&mut self, job: &mut ZbdJob, z: u32) -> bool {
        if self.max_write_zones == 0 {
            return true;
        }
        if self.write_zones.contains(&z) {
            return self.remainder(z) > 0;
        }
        if (job.job_max > 0 && job.write_zones >= job.job_max)
            || self.write_zones.len() as u32 >= self.max_write_zones
        {
            return false;
        }
        self.write_zones.push(z);
        job.write_zones += 1;
        true
    }

    fn write_zone_put(&mut self, job: &mut ZbdJob, z: u32) {
        if let Some(i) = self.write_zones.iter().position(|&w| w == z) {
            self.write_zones.remove(i);
            job.write_zones = job.write_zones.saturating_sub(1);
        }
    }

    /// fio's pick_random_zone_idx and zbd_pick_write_zone: a write zone in the job's range,
    /// starting at the one the offset points to.
    fn pick_write_zone(&self, job: &ZbdJob, offset: u64, room: u64) -> Option<u32> {
        let n = self.write_zones.len() as u64;
        if n == 0 {
            return None;
        }
        let first = (offset.saturating_sub(job.file_offset) as u128 * n as u128
            / job.io_size.max(1) as u128) as u64;
        (0..n)
            .map(|k| self.write_zones[((first + k) % n) as usize])
            .find(|&z| z >= job.min_zone && z < job.max_zone && self.remainder(z) >= room)
    }

    fn reset(&mut self, job: &mut ZbdJob, z: u32) -> Option<ZoneAction> {
        let data = self.wp[z as usize];
        if data == 0 {
            return None;
        }
        self.valid_bytes -= data.min(self.valid_bytes);
        self.wp[z as usize] = 0;
        job.resets += 1;
        Some(ZoneAction::Reset(z))
    }

    /// What fio does with `io` of `job` (fio's zbd_adjust_block).
    pub fn adjust(&mut self, job: &mut ZbdJob, io: GeneratedIo) -> Adjusted {
        let zs = self.geometry.zone_bytes;
        let clamp = |z: u64| (z as u32).clamp(job.min_zone, job.max_zone - 1);
        let orig = clamp(io.offset_bytes / zs);
        let min_bs = job.min_bs[io.kind.ddir()].max(1);
        if orig < self.geometry.conventional {
            return self.adjust_conventional(io, min_bs);
        }
        match io.kind {
            IoKind::Read => self.adjust_read(job, io, orig, min_bs),
            IoKind::Write => self.adjust_write(job, io, orig, min_bs),
            IoKind::Trim => {
                // fio resets the zone a trim starts at (it must start at a zone's start).
                let before = [self.reset(job, orig), None];
                if let Some(i) = self.write_zones.iter().position(|&w| w == orig) {
                    self.write_zones.remove(i);
                }
                Adjusted::issue(io, before)
            }
            IoKind::Flush => Adjusted::issue(io, [None, None]),
        }
    }

    /// fio's zbd_adjust_block in a conventional zone (no write pointer): every I/O as it
    /// is, but a write that would cross into a sequential zone is cut short of it; where not
    /// a block fits before that zone, fio mirrors the offset into the zone's start
    /// (`zb->start + (zb + 1)->start - offset`) and cuts the length to the room left there.
    fn adjust_conventional(&self, io: GeneratedIo, min_bs: u64) -> Adjusted {
        let zs = self.geometry.zone_bytes;
        let zone = io.offset_bytes / zs;
        let next_start = (zone + 1) * zs;
        // fio looks at the next zone only: a write may run on into another conventional one.
        let next_has_wp = zone + 1 >= u64::from(self.geometry.conventional)
            && zone + 1 < u64::from(self.geometry.zones);
        if io.kind != IoKind::Write || !next_has_wp || io.offset_bytes + io.len_bytes <= next_start
        {
            return Adjusted::issue(io, [None, None]);
        }
        let (offset_bytes, room) = if io.offset_bytes + min_bs > next_start {
            let offset = zone * zs + (next_start - io.offset_bytes);
            (offset, io.len_bytes.min(next_start - offset))
        } else {
            (io.offset_bytes, next_start - io.offset_bytes)
        };
        let len_bytes = room / min_bs * min_bs;
        if len_bytes == 0 {
            // A zone smaller than a block: nothing fio could issue there.
            return Adjusted::end([None, None]);
        }
        Adjusted::issue(
            GeneratedIo {
                offset_bytes,
                len_bytes,
                ..io
            },
            [None, None],
        )
    }

    /// A read of `io` (in zone `orig`, clamped to the job's range) kept below the write
    /// pointer of its zone or of the nearest zone with data.
    fn adjust_read(&self, job: &ZbdJob, io: GeneratedIo, orig: u32, min_bs: u64) -> Adjusted {
        let before = [None, None];
        if job.read_beyond_wp {
            return Adjusted::issue(io, before);
        }
        let zs = self.geometry.zone_bytes;
        let mut z = orig;
        let mut offset = io.offset_bytes;
        let in_zone = |s: &Self, z: u32, off: u64| off + min_bs <= z as u64 * zs + s.wp[z as usize];
        if self.wp[z as usize] < min_bs || (!job.random && !in_zone(self, z, offset)) {
            let Some(found) = self.find_zone(job, z, min_bs) else {
                return Adjusted::end(before);
            };
            z = found;
            if !job.random {
                offset = z as u64 * zs;
            }
        }
        let start = z as u64 * zs;
        let range = self.wp[z as usize];
        if range <= io.len_bytes {
            offset = start;
        } else if job.random {
            let within = io.offset_bytes.saturating_sub(orig as u64 * zs);
            offset = start + within % (range - io.len_bytes) / min_bs * min_bs;
        }
        let len = io.len_bytes.min(start + range - offset) / min_bs * min_bs;
        if len == 0 {
            return Adjusted::end(before);
        }
        let io = GeneratedIo {
            offset_bytes: offset,
            len_bytes: len,
            ..io
        };
        Adjusted::issue(io, before)
    }

    /// A write of `io` (in zone `orig`, clamped to the job's range) at the write pointer of
    /// a zone the job may write, after the resets and finishes fio sends first.
    fn adjust_write(
        &mut self,
        job: &mut ZbdJob,
        io: GeneratedIo,
        orig: u32,
        min_bs: u64,
    ) -> Adjusted {
        let zs = self.geometry.zone_bytes;
        let mut before = [None, None];
        // fio's setup_zbd_zone_mode: a sequential write past a zone's capacity
        // jumps to the zone's end, the skipped bytes counted as done.
        let within = io.offset_bytes % zs;
        if !job.random
            && self.geometry.capacity_bytes < zs
            && within >= self.geometry.capacity_bytes
        {
            return Adjusted {
                io: None,
                before,
                skip: true,
            };
        }
        let mut z = orig;
        if !self.write_zone_get(job, z) {
            match self
                .pick_write_zone(job, io.offset_bytes, min_bs)
                .or_else(|| self.pick_write_zone(job, io.offset_bytes, 0))
            {
                Some(w) => z = w,
                None => return Adjusted::end(before),
            }
        }
        // Past the threshold, a reset every 1 / zone_reset_frequency writes.
        let mut reset = false;
        if job.zrf > 0.0 && self.valid_bytes as f64 >= job.io_size as f64 * job.zrt {
            self.write_cnt = self.write_cnt.saturating_sub(1);
            if self.write_cnt == 0 {
                self.write_cnt = (1.0 / job.zrf).min(f64::from(u32::MAX)) as u32;
                reset = true;
            }
        }
        if reset || self.remainder(z) < min_bs {
            before[0] = self.reset(job, z);
        }
        let at = self.wp[z as usize];
        let len = io.len_bytes.min(self.remainder(z)) / min_bs * min_bs;
        if len == 0 {
            return Adjusted::end(before);
        }
        self.wp[z as usize] = at + len;
        self.valid_bytes += len;
        let left = self.remainder(z);
        if left < min_bs {
            // A remainder no block fits: fio finishes the zone to free its open
            // resource.
            if left > 0 {
                self.valid_bytes += left;
                self.wp[z as usize] = self.geometry.capacity_bytes;
                before[1] = Some(ZoneAction::Finish(z));
            }
            self.write_zone_put(job, z);
        }
        let io = GeneratedIo {
            offset_bytes: z as u64 * zs + at,
            len_bytes: len,
            ..io
        };
        Adjusted::issue(io, before)
    }

    /// fio's zbd_find_zone: the nearest zone of the job's range holding at least `min_bs`
    /// bytes, looking after and before `z` in turn.
    fn find_zone(&self, job: &ZbdJob, z: u32, min_bs: u64) -> Option<u32> {
        let has = |z: u32| self.wp[z as usize] >= min_bs;
        let span = job.max_zone - job.min_zone;
        for d in 1..=span {
            if z + d < job.max_zone && has(z + d) {
                return Some(z + d);
            }
            if z >= job.min_zone + d && has(z - d) {
                return Some(z - d);
            }
        }
        None
    }

    /// Whether a job asks for fio's zone handling.
    pub fn wanted(spec: &JobSpec) -> bool {
        spec.zoned.mode == ZoneMode::Zbd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> JobSpec {
        flashlab_workload::parse_str(text, "t.fio", &|_| None)
            .unwrap()
            .jobs
            .remove(0)
    }

    fn device(max_open: u32) -> ZbdDevice {
        let g = ZoneGeometry {
            zone_bytes: 1 << 20,
            capacity_bytes: 768 << 10,
            zones: 16,
            max_open,
            max_active: max_open,
            conventional: 0,
        };
        ZbdDevice::new(0, Some(g), |_| 0, &ZonedOptions::default(), 16 << 20).unwrap()
    }

    fn write(d: &mut ZbdDevice, j: &mut ZbdJob, offset: u64, len: u64) -> Adjusted {
        d.adjust(
            j,
            GeneratedIo {
                kind: IoKind::Write,
                offset_bytes: offset,
                len_bytes: len,
            },
        )
    }

    #[test]
    fn writes_go_to_the_write_pointer_and_full_zones_are_reset_before_rewriting() {
        let mut d = device(0);
        let s = spec("[j]\nrw=write\nbs=256k\nzonemode=zbd\n");
        let mut j = d.job(0, &s, (0, 16 << 20)).unwrap();
        // A write in the middle of an empty zone goes to its start.
        let a = write(&mut d, &mut j, 300 << 10, 256 << 10);
        assert_eq!(a.io.unwrap().offset_bytes, 0);
        write(&mut d, &mut j, 0, 256 << 10);
        write(&mut d, &mut j, 0, 256 << 10);
        // The zone is full (768 KiB): the next write to it resets it first.
        let a = write(&mut d, &mut j, 0, 256 << 10);
        assert_eq!(a.before[0], Some(ZoneAction::Reset(0)));
        assert_eq!(a.io.unwrap().offset_bytes, 0);
        assert_eq!(j.resets, 1);
    }

    /// fio's conventional zones (an SMR disk's first ones): I/O goes where the job sends
    /// it, no write pointer moves, and a write is cut short of the first sequential zone.
    #[test]
    fn conventional_zones_take_the_job_s_offsets() {
        let g = ZoneGeometry {
            conventional: 2,
            ..device(0).geometry
        };
        let wp = |z| if z < 2 { 768 << 10 } else { 0 };
        let mut d = ZbdDevice::new(0, Some(g), wp, &ZonedOptions::default(), 16 << 20).unwrap();
        let s = spec("[j]\nrw=randwrite\nbs=64k\nzonemode=zbd\n");
        let mut j = d.job(0, &s, (0, 16 << 20)).unwrap();
        let a = write(&mut d, &mut j, 300 << 10, 64 << 10);
        assert_eq!(a.io.unwrap().offset_bytes, 300 << 10);
        assert_eq!(a.before, [None, None]);
        // No block fits before the sequential zones: fio mirrors the offset into the
        // zone's start, 32 KiB from the end becoming 32 KiB from the start.
        let a = write(&mut d, &mut j, (2 << 20) - (32 << 10), 64 << 10)
            .io
            .unwrap();
        assert_eq!(
            (a.offset_bytes, a.len_bytes),
            ((1 << 20) + (32 << 10), 64 << 10)
        );
        let a = write(&mut d, &mut j, (2 << 20) - (128 << 10), 192 << 10)
            .io
            .unwrap();
        assert_eq!(a.len_bytes, 128 << 10);
        // A sequential zone's write still goes to its pointer.
        let a = write(&mut d, &mut j, (5 << 20) + 4096, 64 << 10)
            .io
            .unwrap();
        assert_eq!(a.offset_bytes, 5 << 20);
        assert_eq!(j.resets, 0);
    }

    #[test]
    fn a_remainder_smaller_than_a_block_is_finished() {
        let mut d = device(0);
        let s = spec("[j]\nrw=write\nbs=512k\nzonemode=zbd\n");
        let mut j = d.job(0, &s, (0, 16 << 20)).unwrap();
        let a = write(&mut d, &mut j, 0, 512 << 10);
        assert_eq!(a.before, [None, Some(ZoneAction::Finish(0))]);
    }

    #[test]
    fn the_open_zone_limit_sends_writes_to_zones_already_open() {
        let mut d = device(2);
        let s = spec("[j]\nrw=randwrite\nbs=4k\nzonemode=zbd\n");
        let mut j = d.job(0, &s, (0, 16 << 20)).unwrap();
        write(&mut d, &mut j, 0, 4096);
        write(&mut d, &mut j, 5 << 20, 4096);
        let a = write(&mut d, &mut j, 9 << 20, 4096).io.unwrap();
        let zone = a.offset_bytes >> 20;
        assert!(zone == 0 || zone == 5, "{zone}");
        assert_eq!(a.offset_bytes & ((1 << 20) - 1), 4096);
    }

    #[test]
    fn options_the_drive_refuses_are_errors_with_fio_s_words() {
        let g = ZoneGeometry {
            zone_bytes: 1 << 20,
            capacity_bytes: 1 << 20,
            zones: 4,
            max_open: 2,
            max_active: 2,
            conventional: 0,
        };
        let mut o = ZonedOptions {
            zone_size: 2 << 20,
            ..Default::default()
        };
        let e = ZbdDevice::new(0, Some(g), |_| 0, &o, 4 << 20).unwrap_err();
        assert!(e.contains("does not match disk zone size"), "{e}");
        o.zone_size = 0;
        o.max_open_zones = 3;
        let e = ZbdDevice::new(0, Some(g), |_| 0, &o, 4 << 20).unwrap_err();
        assert!(e.contains("is larger than max (2)"), "{e}");
        o.ignore_zone_limits = true;
        assert!(ZbdDevice::new(0, Some(g), |_| 0, &o, 4 << 20).is_ok());
        let e = ZbdDevice::new(0, None, |_| 0, &ZonedOptions::default(), 4 << 20).unwrap_err();
        assert!(e.contains("zone size is mandatory"), "{e}");
    }

    #[test]
    fn reads_stay_below_the_write_pointer() {
        let mut d = device(0);
        let s = spec("[j]\nrw=randrw\nbs=4k\nzonemode=zbd\n");
        let mut j = d.job(0, &s, (0, 16 << 20)).unwrap();
        write(&mut d, &mut j, 3 << 20, 64 << 10);
        for off in [0u64, 3 << 20, (3 << 20) + (500 << 10), 9 << 20] {
            let r = d
                .adjust(
                    &mut j,
                    GeneratedIo {
                        kind: IoKind::Read,
                        offset_bytes: off,
                        len_bytes: 4096,
                    },
                )
                .io
                .unwrap();
            assert!(
                r.offset_bytes >= 3 << 20 && r.offset_bytes + 4096 <= (3 << 20) + (64 << 10),
                "{r:?}"
            );
        }
    }
}
