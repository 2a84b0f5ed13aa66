//! Ascending histogram buckets packed as varints: per bucket, its lowest value less the
//! previous bucket's (the first: itself) and its count, each a LEB128 varint.
//! Neighbouring buckets of a histogram of 3 significant digits are at most 1/1,024 of
//! their value apart and most counts are small, so a bucket takes 2 to 4 bytes where
//! the pair of `u64`s takes 16. The collector's blocks of time and a report's
//! `Distribution` hold their buckets this way.

/// `buckets` (ascending lowest values, each with its count) packed.
pub(crate) fn pack(buckets: impl IntoIterator<Item = (u64, u64)>) -> Box<[u8]> {
    let mut out = Vec::new();
    let mut last = 0;
    for (low, count) in buckets {
        put_varint(&mut out, low - last);
        put_varint(&mut out, count);
        last = low;
    }
    out.into_boxed_slice()
}

/// The buckets [`pack`] packed, in order.
pub(crate) fn unpack(bytes: &[u8]) -> Unpack<'_> {
    Unpack { bytes, last: 0 }
}

/// The buckets of packed bytes, read one at a time ([`unpack`]).
#[derive(Clone, Debug)]
pub(crate) struct Unpack<'a> {
    bytes: &'a [u8],
    last: u64,
}

impl Iterator for Unpack<'_> {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        if self.bytes.is_empty() {
            return None;
        }
        self.last += take_varint(&mut self.bytes);
        Some((self.last, take_varint(&mut self.bytes)))
    }
}

/// Appends `value` as a LEB128 varint: 7 bits a byte, low bits first, the top bit set
/// on every byte but the last.
fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads one LEB128 varint off the front of `bytes` (which [`put_varint`] wrote).
fn take_varint(bytes: &mut &[u8]) -> u64 {
    let (mut value, mut shift) = (0, 0);
    while let Some((&byte, rest)) = bytes.split_first() {
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        shift += 7;
        if byte < 0x80 {
            break;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_pack_and_unpack_to_themselves() {
        let max = (1u64 << 52) - 1; // the largest sample a ring holds
        for buckets in [
            vec![],
            vec![(0, 1)],
            vec![
                (0, 3),
                (1, 127),
                (2, 128),
                (2_047, 1 << 40),
                (2_048, u64::MAX),
            ],
            vec![(5_000, 1), (5_004, 2), (1 << 30, 1), (max - 100, 7)],
        ] {
            let packed = pack(buckets.iter().copied());
            assert_eq!(unpack(&packed).collect::<Vec<_>>(), buckets);
        }
        // Neighbouring buckets with small counts take 2 bytes each.
        let dense: Vec<(u64, u64)> = (4_096..4_596).step_by(4).map(|v| (v, 3)).collect();
        assert!(pack(dense.iter().copied()).len() <= 2 * dense.len() + 2);
    }
}
