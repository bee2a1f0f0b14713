//! Fitting a trace's addresses to the simulated device: traces come from disks of every size,
//! the simulated drive has its own capacity and logical block.

use flashlab_engine::IoKind;

use super::TraceRecord;

/// What to do with requests beyond the simulated device's capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remap {
    /// Start block modulo the device's block count (keeps small-scale locality).
    Wrap,
    /// Start block × capacity / trace span: the trace's whole address range shrunk onto the
    /// device (never stretched: a trace that fits keeps its addresses).
    Scale,
    /// A request past the end is an error.
    Error,
}

impl Remap {
    pub fn from_name(name: &str) -> Option<Remap> {
        match name {
            "wrap" => Some(Remap::Wrap),
            "scale" => Some(Remap::Scale),
            "error" => Some(Remap::Error),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Remap::Wrap => "wrap",
            Remap::Scale => "scale",
            Remap::Error => "error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemapError {
    #[error("line {line}: the request at byte {offset_bytes} of {len_bytes} bytes ends past the device's {capacity_bytes} bytes (--remap wrap or scale fit it)")]
    OutOfRange {
        line: u64,
        offset_bytes: u64,
        len_bytes: u64,
        capacity_bytes: u64,
    },
    #[error(
        "the device has no whole logical block ({capacity_bytes} bytes, {block_bytes}-byte blocks)"
    )]
    NoBlocks {
        capacity_bytes: u64,
        block_bytes: u64,
    },
}

/// Maps trace byte ranges onto a device: aligned outward to whole logical blocks, fitted by
/// the [`Remap`] rule, and clamped (not split) at the end of the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remapper {
    mode: Remap,
    block_bytes: u64,
    capacity_blocks: u64,
    /// Scale: blocks spanned by the trace (its highest end).
    span_blocks: u64,
    /// Requests the rule moved, and requests shortened at the end of the device.
    pub moved: u64,
    pub clamped: u64,
}

impl Remapper {
    /// `trace_end_bytes`: the highest end offset of the trace, needed by [`Remap::Scale`]
    /// (ignored by the others).
    pub fn new(
        mode: Remap,
        capacity_bytes: u64,
        block_bytes: u64,
        trace_end_bytes: u64,
    ) -> Result<Self, RemapError> {
        let block_bytes = block_bytes.max(1);
        let capacity_blocks = capacity_bytes / block_bytes;
        if capacity_blocks == 0 {
            return Err(RemapError::NoBlocks {
                capacity_bytes,
                block_bytes,
            });
        }
        Ok(Self {
            mode,
            block_bytes,
            capacity_blocks,
            span_blocks: trace_end_bytes.div_ceil(block_bytes),
            moved: 0,
            clamped: 0,
        })
    }

    /// The request's byte range on the device.
    pub fn map(&mut self, r: &TraceRecord) -> Result<(u64, u64), RemapError> {
        if r.kind == IoKind::Flush {
            return Ok((0, 0));
        }
        let b = self.block_bytes;
        let first = r.offset_bytes / b;
        let end = r.offset_bytes.saturating_add(r.len_bytes).div_ceil(b);
        let blocks = (end - first).max(1);
        let cap = self.capacity_blocks;
        let start = match self.mode {
            Remap::Error => {
                if first.saturating_add(blocks) > cap {
                    return Err(RemapError::OutOfRange {
                        line: r.line,
                        offset_bytes: r.offset_bytes,
                        len_bytes: r.len_bytes,
                        capacity_bytes: cap * b,
                    });
                }
                first
            }
            Remap::Wrap => first % cap,
            Remap::Scale if self.span_blocks > cap => {
                (u128::from(first) * u128::from(cap) / u128::from(self.span_blocks)) as u64
            }
            Remap::Scale => first,
        };
        if start != first {
            self.moved += 1;
        }
        let len = if start.saturating_add(blocks) > cap {
            self.clamped += 1;
            cap - start
        } else {
            blocks
        };
        Ok((start * b, len * b))
    }
}
