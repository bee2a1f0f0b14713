//! How much of a write's real data a compressing controller would remove, for writes that
//! carry data (`flashlab serve`): a greedy LZ77 pass, as fast compressors (LZ4, LZO) make, over
//! each 4 KiB block on its own, since the controller compresses IU by IU.

/// Block the estimate compresses on its own (a 4 KiB IU).
const BLOCK_BYTES: usize = 4096;
/// Shortest match worth a back-reference.
const MIN_MATCH: usize = 4;
/// Bytes a back-reference costs in the output (token and offset, as LZ4).
const MATCH_COST: usize = 3;
const HASH_BITS: u32 = 12;

/// Share of `data` a fast LZ compressor would remove, in percent (0 for random data, near
/// 100 for zeros), as [`crate::IoRequest::compressible_percent`] carries it.
pub fn compressible_percent(data: &[u8]) -> u8 {
    if data.is_empty() {
        return 0;
    }
    let mut table = [u16::MAX; 1 << HASH_BITS];
    let out: usize = data
        .chunks(BLOCK_BYTES)
        .map(|block| {
            table.fill(u16::MAX);
            compressed_len(block, &mut table).min(block.len())
        })
        .sum();
    let saved = data.len() - out;
    (saved * 100 / data.len()) as u8
}

/// Output bytes of one block: literals, plus [`MATCH_COST`] per back-reference of at least
/// [`MIN_MATCH`] bytes to an earlier position with the same four bytes (one candidate per
/// hash, as LZ4's fast mode).
fn compressed_len(block: &[u8], table: &mut [u16; 1 << HASH_BITS]) -> usize {
    let mut out = 0;
    let mut i = 0;
    while i + MIN_MATCH <= block.len() {
        let word = u32::from_le_bytes([block[i], block[i + 1], block[i + 2], block[i + 3]]);
        let h = (word.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize;
        let cand = table[h];
        table[h] = i as u16;
        if cand != u16::MAX {
            let c = usize::from(cand);
            let len = block[i..]
                .iter()
                .zip(&block[c..])
                .take_while(|(a, b)| a == b)
                .count();
            if len >= MIN_MATCH {
                out += MATCH_COST;
                i += len;
                continue;
            }
        }
        out += 1;
        i += 1;
    }
    out + (block.len() - i)
}

#[cfg(test)]
mod tests {
    use super::compressible_percent;

    /// xorshift bytes: incompressible.
    fn random(n: usize, mut x: u64) -> Vec<u8> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    #[test]
    fn zeros_random_and_mixes() {
        assert_eq!(compressible_percent(&[]), 0);
        assert!(compressible_percent(&vec![0; 65536]) >= 99);
        assert_eq!(compressible_percent(&random(65536, 7)), 0);
        // fio's buffer_compress_percentage=50: 512 B chunks, random then zeros.
        let mut half = Vec::new();
        for k in 0..128 {
            half.extend(random(256, k + 1));
            half.extend([0u8; 256]);
        }
        let p = compressible_percent(&half);
        assert!((45..=50).contains(&p), "{p}");
        // Text repeats words: a fast compressor removes a good part of it.
        let text = "the quick brown fox jumps over the lazy dog while the drive compresses \
                    what it is written, block by block, "
            .repeat(200);
        let p = compressible_percent(text.as_bytes());
        assert!(p > 60, "{p}");
    }
}
