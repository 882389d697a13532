//! How the SQL library packs its postings: runs of blocks, a block being the postings of one
//! bucket of 48-bit hash keys, written as varints. Pure functions; `library` does the SQL.
//!
//! A posting's key is the top 48 bits of its fingerprint hash (the embedded index compares
//! fewer; a rare false match only gives alignment a seed it then finds no text for). A run with
//! `bits` bucket bits puts a key in bucket `key >> (48 - bits)`; `bits` is chosen so a block
//! holds about `ENTRIES_PER_BLOCK` postings. A block's entries, sorted by (key, document,
//! position), are each three varints: the key's gap from the previous key (the first from the
//! bucket's first key), the document id shifted left by one with the low bit set for a public
//! document (so a check counts a common k-gram's public postings without looking documents
//! up), and the stream position.

use simcheck::library::{DocId, LibraryError};

pub(crate) const KEY_BITS: u32 = 48;
/// About this many postings per block: small enough that a check reads little besides its own
/// keys, large enough that a row's own overhead (about 50 bytes with its index entry) is a
/// small part of the block's 8 bytes per posting.
const ENTRIES_PER_BLOCK: u64 = 32;
const MAX_BUCKET_BITS: u32 = 40;
/// Runs are numbered below this: a block's key is `run << 40 | bucket`.
pub(crate) const MAX_RUN_ID: i64 = (1 << (63 - MAX_BUCKET_BITS)) - 1;

/// The key of a run's block (`library_blocks.block`).
pub(crate) fn block_key(run: i64, bucket: u64) -> i64 {
    run << MAX_BUCKET_BITS | bucket as i64
}

/// The bucket of a block key.
pub(crate) fn bucket_of_block(block: i64) -> u64 {
    (block as u64) & ((1 << MAX_BUCKET_BITS) - 1)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Posting {
    pub key: u64,
    pub doc: DocId,
    pub pos: u32,
    /// The document is in the public library (not a student's own).
    pub public: bool,
}

pub(crate) fn hash_key(hash: u64) -> u64 {
    hash >> (64 - KEY_BITS)
}

/// Bucket bits for a run of `postings`: the smallest with at most `ENTRIES_PER_BLOCK` postings
/// per bucket on average.
pub(crate) fn bucket_bits_for(postings: u64) -> u32 {
    let blocks = postings.div_ceil(ENTRIES_PER_BLOCK).max(1);
    (64 - (blocks - 1).leading_zeros()).min(MAX_BUCKET_BITS)
}

pub(crate) fn bucket_of(key: u64, bits: u32) -> u64 {
    key >> (KEY_BITS - bits)
}

pub(crate) fn bucket_base(bucket: u64, bits: u32) -> u64 {
    bucket << (KEY_BITS - bits)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// One block's bytes: `entries` sorted, all in the bucket whose first key is `base`.
pub(crate) fn encode_block(entries: &[Posting], base: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 8);
    let mut previous = base;
    for p in entries {
        put_varint(&mut out, p.key - previous);
        put_varint(&mut out, p.doc << 1 | u64::from(p.public));
        put_varint(&mut out, u64::from(p.pos));
        previous = p.key;
    }
    out
}

/// Appends a block's postings to `out`. Bytes that are not a block (a damaged row) are an
/// error, never a panic.
pub(crate) fn decode_block(
    bytes: &[u8],
    base: u64,
    bits: u32,
    out: &mut Vec<Posting>,
) -> Result<(), LibraryError> {
    let corrupt = || LibraryError::Corrupt("相似库的索引块已损坏".into());
    let bucket = bucket_of(base, bits);
    let mut at = 0;
    let mut key = base;
    while at < bytes.len() {
        let gap = get_varint(bytes, &mut at).ok_or_else(corrupt)?;
        let doc = get_varint(bytes, &mut at).ok_or_else(corrupt)?;
        let pos = get_varint(bytes, &mut at).ok_or_else(corrupt)?;
        key = key.checked_add(gap).ok_or_else(corrupt)?;
        if key >> KEY_BITS != 0 || bucket_of(key, bits) != bucket {
            return Err(corrupt());
        }
        out.push(Posting {
            key,
            doc: doc >> 1,
            pos: u32::try_from(pos).map_err(|_| corrupt())?,
            public: doc & 1 == 1,
        });
    }
    Ok(())
}

/// Cuts sorted postings into blocks: (bucket, encoded entries) in bucket order.
pub(crate) fn blocks(sorted: &[Posting], bits: u32) -> impl Iterator<Item = (u64, Vec<u8>)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        let first = sorted.get(start)?;
        let bucket = bucket_of(first.key, bits);
        let len = sorted[start..].partition_point(|p| bucket_of(p.key, bits) == bucket);
        let block = encode_block(&sorted[start..start + len], bucket_base(bucket, bits));
        start += len;
        Some((bucket, block))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn posting(key: u64, doc: DocId, pos: u32) -> Posting {
        Posting {
            key,
            doc,
            pos,
            public: !doc.is_multiple_of(3),
        }
    }

    #[test]
    fn bucket_bits_keep_blocks_near_their_size() {
        assert_eq!(bucket_bits_for(0), 0);
        assert_eq!(bucket_bits_for(32), 0);
        assert_eq!(bucket_bits_for(33), 1);
        assert_eq!(bucket_bits_for(1_000_000), 15);
        assert_eq!(bucket_bits_for(u64::MAX), MAX_BUCKET_BITS);
        let key = hash_key(u64::MAX);
        assert_eq!(key, (1 << 48) - 1);
        assert_eq!(bucket_of(key, 0), 0);
        assert_eq!(bucket_of(key, 40), (1 << 40) - 1);
    }

    #[test]
    fn blocks_round_trip_and_follow_buckets() {
        let bits = 4;
        let mut postings = vec![
            posting(5, 1, 0),
            posting(5, 1, 7),
            posting(5, 900_000, 3),
            posting((1 << 44) + 9, 2, 1 << 24),
            posting((15 << 44) + 1, 3, u32::MAX),
        ];
        postings.sort_unstable();
        let blocks: Vec<_> = blocks(&postings, bits).collect();
        assert_eq!(
            blocks.iter().map(|(b, _)| *b).collect::<Vec<_>>(),
            vec![0, 1, 15]
        );
        let mut back = Vec::new();
        for (bucket, bytes) in &blocks {
            decode_block(bytes, bucket_base(*bucket, bits), bits, &mut back).unwrap();
        }
        assert_eq!(back, postings);
        // A cut block, and one whose keys leave its bucket, are refused, not misread.
        let mut out = Vec::new();
        let cut = &blocks[1].1[..blocks[1].1.len() - 1];
        assert!(decode_block(cut, bucket_base(1, bits), bits, &mut out).is_err());
        assert!(decode_block(&blocks[0].1, bucket_base(15, bits), bits, &mut out).is_ok());
        let mut leaving = blocks[0].1.clone();
        leaving[0] = 0xff;
        leaving.splice(1..1, [0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
        assert!(decode_block(&leaving, bucket_base(15, bits), bits, &mut out).is_err());
    }

    proptest! {
        #[test]
        fn any_postings_round_trip(
            raw in proptest::collection::vec((0u64..(1 << 48), 0u64..(1 << 62), any::<u32>()), 0..200),
            bits in 0u32..=40,
        ) {
            let mut postings: Vec<Posting> =
                raw.into_iter().map(|(key, doc, pos)| posting(key, doc, pos)).collect();
            postings.sort_unstable();
            let mut back = Vec::new();
            for (bucket, bytes) in blocks(&postings, bits) {
                decode_block(&bytes, bucket_base(bucket, bits), bits, &mut back).unwrap();
            }
            prop_assert_eq!(back, postings);
        }

        #[test]
        fn random_bytes_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..300),
            bucket in 0u64..16,
        ) {
            let mut out = Vec::new();
            let _ = decode_block(&bytes, bucket_base(bucket, 4), 4, &mut out);
        }
    }
}
