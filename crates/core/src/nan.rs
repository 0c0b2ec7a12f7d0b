//! The one serde adapter for figures that may be NaN.
//!
//! JSON has no NaN: serde_json writes a NaN (or ±∞) `f64` as `null` and then refuses to read
//! that `null` back into an `f64`, so a result holding one undefined figure (a latency SLO's
//! actual value when nothing completed, the share of an empty sweep step) would not read back
//! at all. The adapters here write a non-finite value as `null` and read `null` as NaN; finite
//! values are written and read exactly as serde writes a plain `f64`, so the JSON of finite
//! figures is unchanged.
//!
//! Use them with `#[serde(with = "…")]` on the field; the field keeps its plain type:
//!
//! ```
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Row {
//!     #[serde(with = "perfbase_core::nan::f64")]
//!     share: f64,
//!     #[serde(with = "perfbase_core::nan::pair")]
//!     ci95: (f64, f64),
//!     #[serde(with = "perfbase_core::nan::pairs")]
//!     under_ms: Vec<(f64, f64)>,
//! }
//!
//! let row = Row { share: f64::NAN, ci95: (1.0, f64::NAN), under_ms: vec![(10.0, f64::NAN)] };
//! let text = serde_json::to_string(&row)?;
//! assert_eq!(text, r#"{"share":null,"ci95":[1.0,null],"under_ms":[[10.0,null]]}"#);
//! let back: Row = serde_json::from_str(&text)?;
//! assert!(back.share.is_nan() && back.ci95.1.is_nan() && back.under_ms[0].1.is_nan());
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! ±∞ is written as `null` too and so reads back as NaN: no figure here is meaningfully
//! infinite. An `Option<f64>` needs no adapter (a NaN in it reads back as `None`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An `f64` that serialises through the adapter: the element type of [`pair`] and [`pairs`].
#[derive(Clone, Copy)]
struct Figure(std::primitive::f64);

impl Serialize for Figure {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self::f64::serialize(&self.0, serializer)
    }
}

impl<'de> Deserialize<'de> for Figure {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        self::f64::deserialize(deserializer).map(Figure)
    }
}

/// NaN, the default of a figure that older results did not record.
pub fn missing() -> f64 {
    f64::NAN
}

/// One `f64`: NaN and ±∞ are written as `null`, `null` reads as NaN.
/// Use as `#[serde(with = "perfbase_core::nan::f64")]`.
pub mod f64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        if value.is_finite() {
            serializer.serialize_f64(*value)
        } else {
            serializer.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
    }
}

/// A `(f64, f64)` pair, written as a two-element array as serde does, each element through
/// [`mod@f64`]. Use as `#[serde(with = "perfbase_core::nan::pair")]`.
pub mod pair {
    use super::Figure;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(value: &(f64, f64), serializer: S) -> Result<S::Ok, S::Error> {
        (Figure(value.0), Figure(value.1)).serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(f64, f64), D::Error> {
        let (a, b) = <(Figure, Figure)>::deserialize(deserializer)?;
        Ok((a.0, b.0))
    }
}

/// A `Vec<(f64, f64)>`, written as an array of [`pair`]s.
/// Use as `#[serde(with = "perfbase_core::nan::pairs")]`.
pub mod pairs {
    use super::Figure;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        value: &[(f64, f64)],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(value.iter().map(|&(a, b)| (Figure(a), Figure(b))))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<(f64, f64)>, D::Error> {
        let pairs = Vec::<(Figure, Figure)>::deserialize(deserializer)?;
        Ok(pairs.into_iter().map(|(a, b)| (a.0, b.0)).collect())
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Serialize, Deserialize)]
    struct Figures {
        #[serde(with = "super::f64")]
        one: f64,
        #[serde(with = "super::pair")]
        pair: (f64, f64),
        #[serde(with = "super::pairs")]
        pairs: Vec<(f64, f64)>,
    }

    /// The same fields with no adapter: what serde writes by default.
    #[derive(Debug, Serialize)]
    struct Plain {
        one: f64,
        pair: (f64, f64),
        pairs: Vec<(f64, f64)>,
    }

    /// Flattened, as `PhaseVerdict` flattens `Verdict`: serde buffers the fields first.
    #[derive(Debug, Serialize, Deserialize)]
    struct Outer {
        name: String,
        #[serde(flatten)]
        inner: Figures,
    }

    fn round_trip(f: &Figures) -> (String, Figures) {
        let text = serde_json::to_string(f).expect("serialises");
        let back = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        (text, back)
    }

    #[test]
    fn nan_is_written_as_null_and_read_back_as_nan() {
        let f = Figures {
            one: f64::NAN,
            pair: (f64::NAN, 2.5),
            pairs: vec![(10.0, f64::NAN), (f64::NAN, 0.5)],
        };
        let (text, back) = round_trip(&f);
        assert_eq!(
            text,
            r#"{"one":null,"pair":[null,2.5],"pairs":[[10.0,null],[null,0.5]]}"#
        );
        assert!(back.one.is_nan());
        assert!(back.pair.0.is_nan());
        assert_eq!(back.pair.1, 2.5);
        assert_eq!(back.pairs.len(), 2);
        assert_eq!(back.pairs[0].0, 10.0);
        assert!(back.pairs[0].1.is_nan() && back.pairs[1].0.is_nan());
        assert_eq!(back.pairs[1].1, 0.5);
    }

    #[test]
    fn infinities_are_written_as_null() {
        let f = Figures {
            one: f64::INFINITY,
            pair: (f64::NEG_INFINITY, 1.0),
            pairs: vec![],
        };
        let (text, back) = round_trip(&f);
        assert_eq!(text, r#"{"one":null,"pair":[null,1.0],"pairs":[]}"#);
        assert!(back.one.is_nan() && back.pair.0.is_nan());
    }

    #[test]
    fn finite_values_are_unchanged_and_written_as_serde_writes_them() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -3.25,
            1e-300,
            1.7976931348623157e308,
            0.1 + 0.2,
        ];
        for &v in &values {
            let f = Figures {
                one: v,
                pair: (v, -v),
                pairs: vec![(v, v / 3.0)],
            };
            let plain = Plain {
                one: f.one,
                pair: f.pair,
                pairs: f.pairs.clone(),
            };
            let (text, back) = round_trip(&f);
            assert_eq!(text, serde_json::to_string(&plain).expect("serialises"));
            // Read back exactly as a plain f64 field reads the same text (serde_json's default
            // parser may be off by one ulp for some values, adapter or not).
            let plain_back = |x: f64| -> f64 {
                let t = serde_json::to_string(&x).expect("serialises");
                serde_json::from_str(&t).expect("reads")
            };
            assert_eq!(back.one.to_bits(), plain_back(v).to_bits());
            assert_eq!(back.pair.0.to_bits(), plain_back(v).to_bits());
            assert_eq!(back.pair.1.to_bits(), plain_back(-v).to_bits());
            assert_eq!(back.pairs[0].0.to_bits(), plain_back(v).to_bits());
            assert_eq!(back.pairs[0].1.to_bits(), plain_back(v / 3.0).to_bits());
        }
        // Values JSON writes exactly come back bit for bit.
        for v in [0.0, -0.0, 1.0, -3.25, 0.5, 1e6] {
            let (_, back) = round_trip(&Figures {
                one: v,
                pair: (v, v),
                pairs: vec![(v, v)],
            });
            assert_eq!(back.one.to_bits(), f64::to_bits(v));
            assert_eq!(back.pairs[0].1.to_bits(), f64::to_bits(v));
        }
        // Integers in the JSON (as other writers may produce) read as floats.
        let back: Figures =
            serde_json::from_str(r#"{"one":3,"pair":[1,-2],"pairs":[[5,0]]}"#).expect("reads");
        assert_eq!(
            (back.one, back.pair, back.pairs),
            (3.0, (1.0, -2.0), vec![(5.0, 0.0)])
        );
    }

    #[test]
    fn works_inside_flatten_and_through_values() {
        let o = Outer {
            name: "x".into(),
            inner: Figures {
                one: f64::NAN,
                pair: (1.0, f64::NAN),
                pairs: vec![(f64::NAN, 2.0)],
            },
        };
        let value = serde_json::to_value(&o).expect("serialises");
        assert_eq!(value["one"], serde_json::Value::Null);
        let back: Outer = serde_json::from_value(value).expect("reads from a Value");
        assert!(back.inner.one.is_nan() && back.inner.pair.1.is_nan());
        assert!(back.inner.pairs[0].0.is_nan());
        let text = serde_json::to_string(&o).expect("serialises");
        let back: Outer = serde_json::from_str(&text).expect("reads from text");
        assert_eq!(back.inner.pair.0, 1.0);
    }

    #[test]
    fn wrong_types_are_still_errors() {
        assert!(serde_json::from_str::<Figures>(r#"{"one":"x","pair":[1,2],"pairs":[]}"#).is_err());
        assert!(serde_json::from_str::<Figures>(r#"{"one":1,"pair":[1],"pairs":[]}"#).is_err());
        assert!(serde_json::from_str::<Figures>(r#"{"pair":[1,2],"pairs":[]}"#).is_err());
    }
}
