//! Redis Cluster key slots: CRC16-XMODEM of the key (or of its `{hashtag}`) modulo 16384, as
//! the cluster specification defines them.

/// Number of hash slots in a Redis Cluster.
pub const SLOTS: usize = 16384;

/// The CRC16 lookup table (XMODEM: polynomial 0x1021, initial value 0, no reflection).
const TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// CRC16-XMODEM of `bytes`.
pub fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ TABLE[usize::from(((crc >> 8) as u8) ^ b)]
    })
}

/// The part of `key` that is hashed: the text between the first `{` and the next `}` when
/// that is non-empty, else the whole key.
pub fn hash_part(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// The cluster slot of `key`.
pub fn slot(key: &[u8]) -> u16 {
    crc16(hash_part(key)) % SLOTS as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_test_vector() {
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn known_slots() {
        // Values from `CLUSTER KEYSLOT` on a real server.
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"bar"), 5061);
        assert_eq!(slot(b"hello"), 866);
    }

    #[test]
    fn hashtags() {
        assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
        assert_eq!(slot(b"{user1000}.followers"), slot(b"{user1000}.following"));
        assert_eq!(hash_part(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hash_part(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hash_part(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hash_part(b"{bar"), b"{bar");
        assert_eq!(slot(b"a{b}c"), slot(b"b"));
    }
}
