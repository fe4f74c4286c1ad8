//! Serde visitors that keep only the wanted columns of {"meta", "columns"}
//! and skip everything else with IgnoredAny (they still parse it).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Deserializes the root; yields the wanted columns in the order asked.
pub struct Root<'a>(pub &'a [&'a str]);

struct ColumnsSeed<'a>(&'a [&'a str]);

impl<'de> DeserializeSeed<'de> for Root<'_> {
    type Value = Vec<Vec<f64>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Root<'_> {
    type Value = Vec<Vec<f64>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("{meta, columns}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "columns" {
                out = Some(map.next_value_seed(ColumnsSeed(self.0))?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        out.ok_or_else(|| serde::de::Error::missing_field("columns"))
    }

    /// Positional encodings: [meta, columns].
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        seq.next_element::<IgnoredAny>()?;
        seq.next_element_seed(ColumnsSeed(self.0))?.ok_or_else(|| serde::de::Error::missing_field("columns"))
    }
}

impl<'de> DeserializeSeed<'de> for ColumnsSeed<'_> {
    type Value = Vec<Vec<f64>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ColumnsSeed<'_> {
    type Value = Vec<Vec<f64>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of columns")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<Option<Vec<f64>>> = vec![None; self.0.len()];
        while let Some(key) = map.next_key::<String>()? {
            match self.0.iter().position(|w| *w == key) {
                Some(i) => out[i] = Some(map.next_value()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        out.into_iter()
            .zip(self.0)
            .map(|(c, name)| c.ok_or_else(|| serde::de::Error::custom(format!("no column {name}"))))
            .collect()
    }
}
