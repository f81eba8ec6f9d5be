//! Cache keys: one canonical, length-prefixed byte encoding of what a cached value depends on,
//! hashed with xxh3.
//!
//! Every key aic stores under — per-file rows, the prompt cache, the spec cache, derived rows
//! such as git history — is built with a [`CacheKeyHasher`]: a key starts with a format tag
//! naming the kind of key and its version, then takes its fields in a fixed order. Each field is
//! written with its length (or a fixed width) in front, so `("ab", "c")` and `("a", "bc")` never
//! collide, and a value whose order carries no meaning (a set of paths) is sorted by its caller
//! before it is written.
//!
//! Why not [`std::hash::Hash`]: its output is neither stable across Rust versions nor across
//! platforms, and a key written by one aic must be found by the next build and by another
//! machine reading the same export.
//!
//! # Example
//!
//! ```
//! use aic_storage::{CacheKey, CacheKeyHasher};
//!
//! let mut a = CacheKeyHasher::new("example-v1");
//! a.write(&"ab").write(&"c");
//! let mut b = CacheKeyHasher::new("example-v1");
//! b.write(&"a").write(&"bc");
//! assert_ne!(a.finish(), b.finish());
//! ```

use xxhash_rust::xxh3::Xxh3;

/// Builds a cache key from typed fields: a format tag first, then each field
/// length-prefixed or fixed-width, hashed with xxh3 (128 bits, or 256 from two
/// seeds). A value whose order carries no meaning is sorted before it is written.
#[derive(Clone)]
pub struct CacheKeyHasher {
    low: Xxh3,
    high: Xxh3,
}

impl std::fmt::Debug for CacheKeyHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheKeyHasher").finish_non_exhaustive()
    }
}

impl CacheKeyHasher {
    /// A key of the kind `format` (a name with a version, such as `prompt-v2`): the tag is its
    /// first field, so keys of different kinds never meet.
    pub fn new(format: &str) -> Self {
        let mut hasher = Self {
            low: Xxh3::with_seed(0),
            high: Xxh3::with_seed(1),
        };
        hasher.write_bytes(format.as_bytes());
        hasher
    }

    fn update(&mut self, bytes: &[u8]) {
        self.low.update(bytes);
        self.high.update(bytes);
    }

    /// Writes a byte string, length first (the same encoding as a `str` of those bytes).
    pub fn write_bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.update(&(bytes.len() as u64).to_le_bytes());
        self.update(bytes);
        self
    }

    /// Writes any [`CacheKey`] value.
    pub fn write<T: CacheKey + ?Sized>(&mut self, value: &T) -> &mut Self {
        value.cache_key(self);
        self
    }

    /// The 128-bit key.
    pub fn finish(&self) -> u128 {
        self.low.digest128()
    }

    /// A 256-bit key (two independent 128-bit digests), for tables whose keys are looked up
    /// across every project and must not collide in practice.
    pub fn finish_256(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        out[..16].copy_from_slice(&self.low.digest128().to_be_bytes());
        out[16..].copy_from_slice(&self.high.digest128().to_be_bytes());
        out
    }
}

/// A value that can be part of a cache key: it writes a canonical encoding of itself.
///
/// Implementations write a fixed-width or length-prefixed encoding so that the fields of a key
/// stay apart; a type whose iteration order is not meaningful sorts before writing.
pub trait CacheKey {
    /// Writes this value into `key`.
    fn cache_key(&self, key: &mut CacheKeyHasher);
}

impl CacheKey for str {
    fn cache_key(&self, key: &mut CacheKeyHasher) {
        key.write_bytes(self.as_bytes());
    }
}

impl CacheKey for String {
    fn cache_key(&self, key: &mut CacheKeyHasher) {
        key.write_bytes(self.as_bytes());
    }
}

impl CacheKey for bool {
    fn cache_key(&self, key: &mut CacheKeyHasher) {
        key.update(&[u8::from(*self)]);
    }
}

macro_rules! fixed_width {
    ($($ty:ty),*) => {$(
        impl CacheKey for $ty {
            fn cache_key(&self, key: &mut CacheKeyHasher) {
                key.update(&self.to_le_bytes());
            }
        }
    )*};
}

fixed_width!(u8, u16, u32, u64, u128, i64);

impl<T: CacheKey + ?Sized> CacheKey for &T {
    fn cache_key(&self, key: &mut CacheKeyHasher) {
        (**self).cache_key(key);
    }
}

impl<T: CacheKey> CacheKey for Option<T> {
    fn cache_key(&self, key: &mut CacheKeyHasher) {
        match self {
            None => key.update(&[0]),
            Some(value) => {
                key.update(&[1]);
                value.cache_key(key);
            }
        }
    }
}

impl<T: CacheKey> CacheKey for [T] {
    fn cache_key(&self, key: &mut CacheKeyHasher) {
        key.update(&(self.len() as u64).to_le_bytes());
        for item in self {
            item.cache_key(key);
        }
    }
}

impl<T: CacheKey> CacheKey for Vec<T> {
    fn cache_key(&self, key: &mut CacheKeyHasher) {
        self.as_slice().cache_key(key);
    }
}

impl<A: CacheKey, B: CacheKey> CacheKey for (A, B) {
    fn cache_key(&self, key: &mut CacheKeyHasher) {
        self.0.cache_key(key);
        self.1.cache_key(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(build: impl FnOnce(&mut CacheKeyHasher)) -> u128 {
        let mut hasher = CacheKeyHasher::new("test-v1");
        build(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn field_boundaries_and_formats_keep_keys_apart() {
        let ab_c = key(|k| {
            k.write("ab").write("c");
        });
        assert_ne!(
            ab_c,
            key(|k| {
                k.write("a").write("bc");
            })
        );
        assert_ne!(
            key(|k| {
                k.write(&Some(0u32));
            }),
            key(|k| {
                k.write(&None::<u32>);
            })
        );
        assert_ne!(
            key(|k| {
                k.write(&vec!["a".to_owned()]).write(&Vec::<String>::new());
            }),
            key(|k| {
                k.write(&Vec::<String>::new()).write(&vec!["a".to_owned()]);
            })
        );
        let mut other = CacheKeyHasher::new("test-v2");
        other.write("ab").write("c");
        assert_ne!(ab_c, other.finish());
    }

    #[test]
    fn keys_are_stable_across_builds() {
        // A key written by one aic must be found by the next: this value is fixed.
        let mut hasher = CacheKeyHasher::new("stable-v1");
        hasher.write("src/a.rs").write(&7u32).write(&true);
        assert_eq!(hasher.finish(), key_of_stable());
        let wide = hasher.finish_256();
        assert_eq!(wide[..16], hasher.finish().to_be_bytes());
        assert_ne!(wide[..16], wide[16..]);
    }

    fn key_of_stable() -> u128 {
        let mut bytes = Vec::new();
        for field in [&b"stable-v1"[..], b"src/a.rs"] {
            bytes.extend_from_slice(&(field.len() as u64).to_le_bytes());
            bytes.extend_from_slice(field);
        }
        bytes.extend_from_slice(&7u32.to_le_bytes());
        bytes.push(1);
        xxhash_rust::xxh3::xxh3_128(&bytes)
    }
}
