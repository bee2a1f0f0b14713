//! Zoned namespaces (NVMe ZNS, TP4053): the zones' states and write pointers, the limits on
//! open and active zones, and where a zone's data lies on the dies.
//!
//! A zone is written sequentially from its start; its data goes to erase blocks of its own,
//! striped over the dies and planes as a conventional drive stripes a superblock, and a reset
//! erases them. The drive places nothing itself and copies nothing: with no garbage
//! collection, NAND writes equal host writes unless the host rewrites data.
//!
//! This module is timing-free: [`Zones`] checks a command against the zone rules and changes
//! the states; the drive (`ssd/zoned.rs`) turns the pages a write fills into programs and a
//! reset into erases.

use flashlab_engine::{DeviceError, ZoneGeometry, ZoneOp};

/// Most zones a drive or disk may have ([`flashlab_engine::MAX_ZONES`]).
pub const MAX_ZONES: u64 = flashlab_engine::MAX_ZONES;

/// Largest byte range the host may address across the zones (zones × zone size): the
/// host's byte offsets are signed 64-bit (`off_t`).
pub const MAX_ZONED_BYTES: u64 = i64::MAX as u64;

/// Linux's errno for NVMe's open and active zone resource errors (BLK_STS_ZONE_OPEN_RESOURCE
/// and BLK_STS_ZONE_ACTIVE_RESOURCE map to ETOOMANYREFS); every other zone status is EIO.
pub const ETOOMANYREFS: i32 = 109;
const EIO: i32 = 5;

/// A zone's state (NVMe ZNS's zone states; read-only and offline are not modelled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZoneState {
    #[default]
    Empty,
    ImplicitlyOpen,
    ExplicitlyOpen,
    Closed,
    Full,
}

flashlab_engine::impl_state_enum!(ZoneState {
    Empty,
    ImplicitlyOpen,
    ExplicitlyOpen,
    Closed,
    Full
});

impl ZoneState {
    fn is_open(self) -> bool {
        matches!(self, ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen)
    }
    fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
    /// The name of the state as `nvme zns report-zones` prints it.
    pub fn name(self) -> &'static str {
        match self {
            ZoneState::Empty => "EMPTY",
            ZoneState::ImplicitlyOpen => "IMP_OPENED",
            ZoneState::ExplicitlyOpen => "EXP_OPENED",
            ZoneState::Closed => "CLOSED",
            ZoneState::Full => "FULL",
        }
    }
}

/// The zones' layout on the media, derived from the drive description (`[zns]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneModel {
    pub geometry: ZoneGeometry,
    /// Bytes of one page of the native cell mode.
    pub page_bytes: u64,
    /// Erase blocks a zone's capacity takes, and the units (dies or planes) they stripe over.
    pub blocks_per_zone: u32,
    pub units: u32,
    pub blocks_per_unit: u32,
    /// The table of the drive description's zone keys, which errors name (`zns`).
    pub keys: &'static str,
}

impl ZoneModel {
    /// The erase block holding page `page` (a page index from the zone's start) of zone
    /// `zone`, and the page within that block. Consecutive pages go to consecutive blocks
    /// of the zone, which lie on consecutive units: a zone is written across the dies as a
    /// superblock is. The zones take the blocks in stripe order (slot `s` of the drive is
    /// block `s / units` of unit `s % units`).
    #[inline]
    pub fn locate(&self, zone: u32, page: u64) -> (u32, u32) {
        let bpz = u64::from(self.blocks_per_zone);
        let k = page % bpz;
        let slot = u64::from(zone) * bpz + k;
        let units = u64::from(self.units);
        let block = (slot % units) * u64::from(self.blocks_per_unit) + slot / units;
        (block as u32, (page / bpz) as u32)
    }
}

/// The zones' states and write pointers.
#[derive(Debug, Clone)]
pub struct Zones {
    pub model: ZoneModel,
    state: Vec<ZoneState>,
    /// Bytes written from each zone's start.
    wp: Vec<u64>,
    open: u32,
    active: u32,
    /// Implicitly opened zones, oldest first: the one the drive closes when a write needs an
    /// open zone beyond the limit (bounded by `max_open`).
    implicit: Vec<u32>,
    pub resets: u64,
    pub finishes: u64,
    pub implicit_closes: u64,
}

flashlab_engine::impl_state!(Zones {
    state, wp, open, active, implicit, resets, finishes, implicit_closes
} skip { model } check Zones::check);

/// What a write did to its zone: its index and the byte range it wrote, from the zone's
/// start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneWrite {
    pub zone: u32,
    pub from: u64,
    pub to: u64,
}

fn zone_err(status: &'static str, errno: i32, reason: String) -> DeviceError {
    DeviceError::Zone {
        status,
        errno,
        reason,
    }
}

impl Zones {
    pub fn new(model: ZoneModel) -> Zones {
        let n = model.geometry.zones as usize;
        Zones {
            model,
            state: vec![ZoneState::Empty; n],
            wp: vec![0; n],
            open: 0,
            active: 0,
            implicit: Vec::with_capacity(model.geometry.max_open as usize + 1),
            resets: 0,
            finishes: 0,
            implicit_closes: 0,
        }
    }

    /// Loaded zones are ones the zone rules leave: a state and a write pointer per zone,
    /// an empty zone at its start, every zone not full below its capacity (a write that
    /// reaches it makes the zone full); the open and active counts those of the states and
    /// within `max_open_zones` and `max_active_zones`; the implicitly opened zones listed
    /// once each, and only they. O(zones).
    fn check(&self) -> Result<(), String> {
        let g = self.model.geometry;
        let n = g.zones as usize;
        if self.state.len() != n || self.wp.len() != n {
            return Err(format!(
                "the zones' state holds {} zones and wp {} where this configuration has {n}",
                self.state.len(),
                self.wp.len()
            ));
        }
        let cap = g.capacity_bytes;
        for (z, (&s, &wp)) in self.state.iter().zip(&self.wp).enumerate() {
            if (z as u32) < g.conventional && (s != ZoneState::Empty || wp != 0) {
                return Err(format!(
                    "conventional zone {z} is {} with its write pointer (wp) at byte {wp} (valid: a conventional zone has no write pointer, EMPTY at 0)",
                    s.name()
                ));
            }
            let ok = match s {
                ZoneState::Empty => wp == 0,
                ZoneState::Full => wp <= cap,
                _ => wp < cap,
            };
            if !ok {
                return Err(format!(
                    "zone {z} is {} with its write pointer (wp) at byte {wp} (valid: 0 when empty, below the zone capacity of {cap} bytes unless full)",
                    s.name()
                ));
            }
        }
        let open = self.state.iter().filter(|s| s.is_open()).count() as u32;
        let active = self.state.iter().filter(|s| s.is_active()).count() as u32;
        if open != self.open || active != self.active {
            return Err(format!(
                "the zones' open count is {} and active count {} where their states have {open} and {active}",
                self.open, self.active
            ));
        }
        let over = |count: u32, limit: u32| limit > 0 && count > limit;
        if over(open, g.max_open) || over(active, g.max_active) {
            return Err(format!(
                "{open} zones are open and {active} active (valid: {k}.max_open_zones = {}, {k}.max_active_zones = {}; 0 is no limit)",
                g.max_open, g.max_active, k = self.model.keys
            ));
        }
        let implicit = self
            .state
            .iter()
            .filter(|&&s| s == ZoneState::ImplicitlyOpen)
            .count();
        let mut listed = vec![false; n];
        for &z in &self.implicit {
            let fits = self
                .state
                .get(z as usize)
                .is_some_and(|&s| s == ZoneState::ImplicitlyOpen);
            if !fits || std::mem::replace(&mut listed[z as usize], true) {
                return Err(format!(
                    "the zones' implicit list names zone {z} twice, past the zones or not implicitly open"
                ));
            }
        }
        if self.implicit.len() != implicit {
            return Err(format!(
                "the zones' implicit list names {} zones where {implicit} are implicitly open",
                self.implicit.len()
            ));
        }
        Ok(())
    }

    pub fn geometry(&self) -> ZoneGeometry {
        self.model.geometry
    }

    pub fn state(&self, zone: u32) -> ZoneState {
        self.state[zone as usize]
    }

    /// Bytes written in zone `zone` from its start; a conventional zone reports its capacity,
    /// as Linux and fio take a zone without a write pointer (fio's `ZBD_ZONE_COND_NOT_WP`).
    pub fn write_pointer(&self, zone: u32) -> u64 {
        if zone < self.model.geometry.conventional {
            return self.model.geometry.capacity_bytes;
        }
        self.wp[zone as usize]
    }

    /// Power lost and back: the controller's reset takes every open zone to Closed, or to
    /// Empty when nothing is written in it (NVMe ZNS command set, zone state machine: a
    /// controller level reset closes the opened zones); write pointers stay.
    pub fn power_cycle(&mut self) {
        for zone in 0..self.model.geometry.zones {
            if self.state[zone as usize].is_open() {
                let to = if self.wp[zone as usize] == 0 {
                    ZoneState::Empty
                } else {
                    ZoneState::Closed
                };
                self.set_state(zone, to);
            }
        }
    }

    /// Zones open and active now.
    pub fn open_active(&self) -> (u32, u32) {
        (self.open, self.active)
    }

    /// Bytes the host can address: every zone's size.
    pub fn capacity_bytes(&self) -> u64 {
        u64::from(self.model.geometry.zones) * self.model.geometry.zone_bytes
    }

    /// The zone holding byte `offset` and the offset within it.
    #[inline]
    pub fn split(&self, offset: u64) -> (u32, u64) {
        let z = self.model.geometry.zone_bytes;
        ((offset / z) as u32, offset % z)
    }

    fn set_state(&mut self, zone: u32, to: ZoneState) {
        let from = std::mem::replace(&mut self.state[zone as usize], to);
        self.open = self.open - u32::from(from.is_open()) + u32::from(to.is_open());
        self.active = self.active - u32::from(from.is_active()) + u32::from(to.is_active());
        if from == ZoneState::ImplicitlyOpen && to != from {
            if let Some(i) = self.implicit.iter().position(|&z| z == zone) {
                self.implicit.remove(i);
            }
        }
        if to == ZoneState::ImplicitlyOpen && from != to {
            self.implicit.push(zone);
        }
    }

    /// Resources for zone `zone` (empty or closed) to become open: an active one if it is
    /// empty, an open one, which the drive frees by closing its oldest implicitly opened
    /// zone when the limit is reached (NVMe lets the controller do so; with every open zone
    /// opened explicitly the command fails).
    fn make_open(&mut self, zone: u32) -> Result<(), DeviceError> {
        let g = self.model.geometry;
        let s = self.state[zone as usize];
        if s.is_open() {
            return Ok(());
        }
        if s == ZoneState::Empty && g.max_active > 0 && self.active >= g.max_active {
            return Err(zone_err(
                "Too Many Active Zones",
                ETOOMANYREFS,
                format!(
                    "zone {zone} cannot become active: {} zones are open or closed ({}.max_active_zones = {})",
                    self.active, self.model.keys, g.max_active
                ),
            ));
        }
        if g.max_open > 0 && self.open >= g.max_open {
            let Some(&oldest) = self.implicit.first() else {
                return Err(zone_err(
                    "Too Many Open Zones",
                    ETOOMANYREFS,
                    format!(
                        "zone {zone} cannot be opened: {} zones are explicitly open ({}.max_open_zones = {})",
                        self.open, self.model.keys, g.max_open
                    ),
                ));
            };
            self.set_state(oldest, ZoneState::Closed);
            self.implicit_closes += 1;
        }
        Ok(())
    }

    /// Check a write of `len` bytes at drive byte `offset` against the zone rules and move
    /// the write pointer past it (a write opens its zone implicitly; one that reaches the
    /// capacity makes it full). A conventional zone takes a write anywhere, short of the
    /// first sequential zone (ZBC's write boundary error).
    pub fn write(&mut self, offset: u64, len: u64) -> Result<ZoneWrite, DeviceError> {
        let (zone, at) = self.split(offset);
        let g = self.model.geometry;
        if zone < g.conventional {
            let end = u64::from(g.conventional) * g.zone_bytes;
            if offset + len > end {
                return Err(zone_err(
                    "Zone Boundary Error",
                    EIO,
                    format!(
                        "write of {len} bytes at byte {offset} runs from the conventional zones into sequential zone {} (byte {end})",
                        g.conventional
                    ),
                ));
            }
            return Ok(ZoneWrite {
                zone,
                from: at,
                to: at + len,
            });
        }
        let s = self.state[zone as usize];
        let wp = self.wp[zone as usize];
        if s == ZoneState::Full {
            return Err(zone_err(
                "Zone Is Full",
                EIO,
                format!("write of {len} bytes at byte {offset}: zone {zone} is full"),
            ));
        }
        if at != wp {
            return Err(zone_err(
                "Zone Invalid Write",
                EIO,
                format!(
                    "write of {len} bytes at byte {offset} is not at zone {zone}'s write pointer (byte {})",
                    u64::from(zone) * g.zone_bytes + wp
                ),
            ));
        }
        if at + len > g.capacity_bytes {
            return Err(zone_err(
                "Zone Boundary Error",
                EIO,
                format!(
                    "write of {len} bytes at byte {offset} runs past zone {zone}'s capacity ({} bytes)",
                    g.capacity_bytes
                ),
            ));
        }
        self.make_open(zone)?;
        if s != ZoneState::ExplicitlyOpen {
            self.set_state(zone, ZoneState::ImplicitlyOpen);
        }
        let to = at + len;
        self.wp[zone as usize] = to;
        if to == g.capacity_bytes {
            self.set_state(zone, ZoneState::Full);
        }
        Ok(ZoneWrite { zone, from: at, to })
    }

    /// Zone append: a write of `len` bytes at zone `zone`'s write pointer, wherever that is.
    pub fn append(&mut self, zone: u32, len: u64) -> Result<ZoneWrite, DeviceError> {
        self.check_zone(zone, "Zone Append")?;
        // A full zone's write pointer may be its end, the next zone's first byte.
        if self.state[zone as usize] == ZoneState::Full {
            return Err(zone_err(
                "Zone Is Full",
                EIO,
                format!("zone append of {len} bytes: zone {zone} is full"),
            ));
        }
        let at = u64::from(zone) * self.model.geometry.zone_bytes + self.wp[zone as usize];
        self.write(at, len)
    }

    fn check_zone(&self, zone: u32, what: &str) -> Result<(), DeviceError> {
        if zone >= self.model.geometry.zones {
            return Err(zone_err(
                "Invalid Field in Command",
                EIO,
                format!(
                    "{what} of zone {zone}: the drive has zones 0 to {}",
                    self.model.geometry.zones - 1
                ),
            ));
        }
        Ok(())
    }

    /// A zone management command. Returns the byte range a finish or reset affects: for
    /// finish, the bytes written before it (the drive programs the zone's last, partial,
    /// page); for reset, the bytes the zone held (its blocks to erase).
    pub fn command(&mut self, op: ZoneOp, zone: u32) -> Result<u64, DeviceError> {
        self.check_zone(zone, &format!("{op:?}"))?;
        if zone < self.model.geometry.conventional {
            return Err(zone_err(
                "Invalid Field in Command",
                EIO,
                format!("zone {op:?} of zone {zone}: a conventional zone has no write pointer"),
            ));
        }
        let s = self.state[zone as usize];
        let wp = self.wp[zone as usize];
        let invalid = |why: &str| {
            zone_err(
                "Invalid Zone State Transition",
                EIO,
                format!(
                    "zone {op:?} of zone {zone} ({}): {why}",
                    s.name().to_lowercase()
                ),
            )
        };
        match op {
            ZoneOp::Open => match s {
                ZoneState::ExplicitlyOpen => {}
                ZoneState::Full => return Err(invalid("a full zone cannot be opened")),
                _ => {
                    // An explicit open never closes another zone opened by the host.
                    self.make_open(zone)?;
                    self.set_state(zone, ZoneState::ExplicitlyOpen);
                }
            },
            ZoneOp::Close => match s {
                ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen => {
                    let to = if wp == 0 {
                        ZoneState::Empty
                    } else {
                        ZoneState::Closed
                    };
                    self.set_state(zone, to);
                }
                ZoneState::Closed => {}
                ZoneState::Empty | ZoneState::Full => {
                    return Err(invalid("only an open zone can be closed"))
                }
            },
            ZoneOp::Finish => {
                if s != ZoneState::Full {
                    self.set_state(zone, ZoneState::Full);
                    self.finishes += 1;
                }
            }
            ZoneOp::Reset => {
                self.set_state(zone, ZoneState::Empty);
                self.wp[zone as usize] = 0;
                self.resets += 1;
            }
        }
        Ok(wp)
    }
}

/// The zones of a zoned device (a ZNS drive, a host-managed SMR disk), or nothing. Whether
/// there are zones is configuration: a conventional device's state holds no byte for them,
/// so its state files are what they are without zones.
#[derive(Debug, Clone, Default)]
pub struct ZonedPart(pub Option<Zones>);

impl flashlab_engine::State for ZonedPart {
    fn save(&self, w: &mut flashlab_engine::StateWriter<'_>) {
        if let Some(z) = &self.0 {
            z.save(w);
        }
    }
    fn load(
        &mut self,
        r: &mut flashlab_engine::StateReader<'_>,
    ) -> Result<(), flashlab_engine::StateError> {
        match &mut self.0 {
            Some(z) => z.load(r),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zoned drive builds no map: its memory estimate (what `describe` prints and
    /// `sim.scale = "auto"` budgets) is the block state and pacing ring, not the 4 bytes per
    /// logical and per physical IU the same drive takes without zones, and it is simulated
    /// whole within the default budget.
    #[test]
    fn a_zoned_drive_takes_no_map_memory() {
        let zoned = crate::load_device_config("wd-ultrastar-dc-zn540-1tb", &[]).unwrap();
        let mut mapped = zoned.clone();
        mapped.zns = Default::default();
        let (z, m) = (zoned.resolve().unwrap(), mapped.resolve().unwrap());
        assert_eq!(z.scale.capacity_factor, 1.0);
        assert!(z.memory_bytes < 100_000_000, "{}", z.memory_bytes);
        let maps = 4 * (m.user_bytes / m.iu_bytes + m.geometry.raw_bytes() / m.iu_bytes);
        assert!(maps > 2_000_000_000, "{maps}");
        assert!(
            m.memory_bytes >= z.memory_bytes + maps,
            "{} {}",
            m.memory_bytes,
            z.memory_bytes
        );
        // The drive built from it holds the same: no map entries.
        let ssd = crate::Ssd::new(&zoned, flashlab_engine::SeedTree::new(1)).unwrap();
        let tables = ssd.ftl().memory_bytes();
        assert!(tables < 50_000_000, "{tables}");
    }

    fn zones(max_open: u32, max_active: u32) -> Zones {
        Zones::new(ZoneModel {
            geometry: ZoneGeometry {
                zone_bytes: 1 << 20,
                capacity_bytes: 768 << 10,
                zones: 8,
                max_open,
                max_active,
                conventional: 0,
            },
            page_bytes: 16 << 10,
            blocks_per_zone: 4,
            units: 8,
            blocks_per_unit: 16,
            keys: "zns",
        })
    }

    fn status(r: Result<impl std::fmt::Debug, DeviceError>) -> &'static str {
        match r {
            Err(DeviceError::Zone { status, .. }) => status,
            other => panic!("expected a zone error, got {other:?}"),
        }
    }

    #[test]
    fn writes_follow_the_write_pointer_and_fill_the_zone() {
        let mut z = zones(0, 0);
        assert_eq!(
            z.write(0, 4096).unwrap(),
            ZoneWrite {
                zone: 0,
                from: 0,
                to: 4096
            }
        );
        assert_eq!(z.state(0), ZoneState::ImplicitlyOpen);
        assert_eq!(status(z.write(0, 4096)), "Zone Invalid Write");
        assert_eq!(status(z.write(8192, 4096)), "Zone Invalid Write");
        assert_eq!(status(z.write(4096, 768 << 10)), "Zone Boundary Error");
        z.write(4096, (768 << 10) - 4096).unwrap();
        assert_eq!(z.state(0), ZoneState::Full);
        assert_eq!(z.open_active(), (0, 0));
        assert_eq!(status(z.write(768 << 10, 4096)), "Zone Is Full");
        // The second zone starts at the zone size, not at the first one's capacity.
        assert_eq!(z.write(1 << 20, 4096).unwrap().zone, 1);
        z.check().unwrap();
    }

    #[test]
    fn open_limit_closes_the_oldest_implicitly_open_zone() {
        let mut z = zones(2, 0);
        z.write(0, 4096).unwrap();
        z.write(1 << 20, 4096).unwrap();
        z.write(2 << 20, 4096).unwrap();
        assert_eq!(z.state(0), ZoneState::Closed);
        assert_eq!(z.open_active(), (2, 3));
        assert_eq!(z.implicit_closes, 1);
        // A closed zone opens again at its write pointer.
        z.write(4096, 4096).unwrap();
        assert_eq!(z.state(0), ZoneState::ImplicitlyOpen);
        assert_eq!(z.state(1), ZoneState::Closed);
        z.check().unwrap();
    }

    #[test]
    fn explicitly_open_zones_are_never_closed_for_another() {
        let mut z = zones(2, 0);
        z.command(ZoneOp::Open, 0).unwrap();
        z.command(ZoneOp::Open, 1).unwrap();
        assert_eq!(status(z.write(2 << 20, 4096)), "Too Many Open Zones");
        assert_eq!(status(z.command(ZoneOp::Open, 3)), "Too Many Open Zones");
        z.command(ZoneOp::Close, 1).unwrap();
        assert_eq!(z.state(1), ZoneState::Empty);
        z.write(2 << 20, 4096).unwrap();
        z.check().unwrap();
    }

    #[test]
    fn active_limit_counts_closed_zones() {
        let mut z = zones(0, 2);
        z.write(0, 4096).unwrap();
        z.write(1 << 20, 4096).unwrap();
        z.command(ZoneOp::Close, 0).unwrap();
        assert_eq!(z.state(0), ZoneState::Closed);
        let e = z.write(2 << 20, 4096).unwrap_err();
        assert!(e.to_string().contains("zns.max_active_zones = 2"), "{e}");
        if let DeviceError::Zone { errno, .. } = e {
            assert_eq!(errno, ETOOMANYREFS);
        }
        z.command(ZoneOp::Finish, 0).unwrap();
        assert_eq!(z.state(0), ZoneState::Full);
        z.write(2 << 20, 4096).unwrap();
        z.check().unwrap();
    }

    #[test]
    fn reset_empties_a_zone_and_append_lands_at_the_pointer() {
        let mut z = zones(0, 0);
        z.write(0, 8192).unwrap();
        assert_eq!(z.command(ZoneOp::Reset, 0).unwrap(), 8192);
        assert_eq!((z.state(0), z.write_pointer(0)), (ZoneState::Empty, 0));
        assert_eq!(z.resets, 1);
        assert_eq!(z.append(0, 4096).unwrap().from, 0);
        assert_eq!(z.append(0, 4096).unwrap().from, 4096);
        assert_eq!(status(z.append(8, 4096)), "Invalid Field in Command");
        assert_eq!(
            status(z.command(ZoneOp::Close, 5)),
            "Invalid Zone State Transition"
        );
        z.check().unwrap();
    }

    /// A host-managed SMR disk's conventional zones (the first ones) take writes anywhere
    /// and report themselves full, as Linux does; a write may not run from them into the
    /// sequential zones, and zone commands on them are refused. The sequential zones keep
    /// the rules. A forged conventional zone with a state is refused at load.
    #[test]
    fn conventional_zones_take_writes_anywhere_and_no_zone_command() {
        let mut m = zones(0, 0).model;
        m.geometry.conventional = 2;
        m.keys = "zoned";
        let mut z = Zones::new(m);
        z.write(512 << 10, 4096).unwrap();
        z.write(4096, 8192).unwrap();
        z.write(0, 1 << 20).unwrap();
        assert_eq!((z.state(0), z.open_active()), (ZoneState::Empty, (0, 0)));
        assert_eq!(z.write_pointer(1), 768 << 10);
        let e = z.write((2 << 20) - 4096, 8192).unwrap_err();
        assert!(e.to_string().contains("into sequential zone 2"), "{e}");
        assert_eq!(
            status(z.command(ZoneOp::Reset, 1)),
            "Invalid Field in Command"
        );
        assert_eq!(
            status(z.write((2 << 20) + 4096, 4096)),
            "Zone Invalid Write"
        );
        z.write(2 << 20, 4096).unwrap();
        assert_eq!(z.write_pointer(2), 4096);
        z.check().unwrap();
        let mut forged = z.clone();
        forged.wp[1] = 4096;
        let e = flashlab_engine::state::reload_into(&forged, &mut Zones::new(m))
            .unwrap_err()
            .to_string();
        assert!(e.contains("conventional zone 1 is EMPTY"), "{e}");
    }

    #[test]
    fn pages_stripe_over_the_units_and_zones_take_their_own_blocks() {
        let z = zones(0, 0);
        let m = z.model;
        // Zone 0 takes stripe slots 0-3 (blocks 0 of units 0-3), zone 1 slots 4-7.
        assert_eq!(m.locate(0, 0), (0, 0));
        assert_eq!(m.locate(0, 1), (16, 0));
        assert_eq!(m.locate(0, 4), (0, 1));
        assert_eq!(m.locate(1, 0), (4 * 16, 0));
        // Slot 8 wraps to block 1 of unit 0.
        assert_eq!(m.locate(2, 0), (1, 0));
        let mut seen = std::collections::BTreeSet::new();
        for zone in 0..8 {
            for k in 0..4 {
                assert!(seen.insert(m.locate(zone, k).0));
            }
        }
    }

    /// A forged zone state is refused at load naming the zone and the field: an empty zone
    /// with data, a write pointer at or past the capacity of a zone not full, counts that
    /// disagree with the states or pass the limits, a zone implicitly open but not listed,
    /// or listed twice. Real zones load and take writes the same.
    #[test]
    fn forged_zones_are_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let fresh = || zones(3, 4);
        let mut z = fresh();
        z.write(0, 4096).unwrap();
        z.write(1 << 20, 8192).unwrap();
        z.command(ZoneOp::Open, 2).unwrap();
        z.write(3 << 20, 768 << 10).unwrap();
        z.write(4 << 20, 4096).unwrap();
        assert_eq!(z.open_active(), (3, 4));
        let mut ok = fresh();
        reload_into(&z, &mut ok).unwrap();
        assert_eq!(
            ok.write(4096, 4096).unwrap(),
            z.clone().write(4096, 4096).unwrap()
        );
        assert_eq!(ok.open_active(), (3, 4));
        type Forge<'a> = (&'a str, &'a dyn Fn(&mut Zones));
        let cases: [Forge; 8] = [
            (
                "zone 5 is EMPTY with its write pointer (wp) at byte 4096",
                &|f| f.wp[5] = 4096,
            ),
            (
                "zone 0 is CLOSED with its write pointer (wp) at byte 786432",
                &|f| f.wp[0] = 768 << 10,
            ),
            (
                "open count is 3 and active count 4 where their states have 3 and 5",
                &|f| {
                    f.state[6] = ZoneState::Closed;
                    f.wp[6] = 4096;
                },
            ),
            ("4 zones are open and 5 active", &|f| {
                f.state[6] = ZoneState::ExplicitlyOpen;
                f.open += 1;
                f.active += 1;
            }),
            ("names zone 4 twice", &|f| f.implicit.push(4)),
            (
                "names zone 0 twice, past the zones or not implicitly open",
                &|f| f.implicit.push(0),
            ),
            ("names zone 99", &|f| f.implicit.push(99)),
            (
                "implicit list names 1 zones where 2 are implicitly open",
                &|f| {
                    f.implicit.remove(0);
                },
            ),
        ];
        for (want, forge) in cases {
            let mut forged = z.clone();
            forge(&mut forged);
            let e = reload_into(&forged, &mut fresh()).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
