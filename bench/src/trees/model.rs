//! Rust structs matching the GraphQL response and the countries GeoJSON
//! field for field: strings stay strings, numbers keep their types, so the
//! JSON → struct → JSON round trip is exact (checked at load).

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};

/// What every peer needs from a model type.
#[cfg(feature = "treebuf")]
pub trait Model: Serialize + DeserializeOwned + PartialEq + tree_buf::Encodable + tree_buf::Decodable {}
#[cfg(feature = "treebuf")]
impl<T: Serialize + DeserializeOwned + PartialEq + tree_buf::Encodable + tree_buf::Decodable> Model for T {}
#[cfg(not(feature = "treebuf"))]
pub trait Model: Serialize + DeserializeOwned + PartialEq {}
#[cfg(not(feature = "treebuf"))]
impl<T: Serialize + DeserializeOwned + PartialEq> Model for T {}

/// Derives shared by every model struct.
macro_rules! model {
    ($(#[$m:meta])* pub struct $name:ident { $($body:tt)* }) => {
        #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
        #[cfg_attr(feature = "treebuf", derive(tree_buf::Encode, tree_buf::Decode))]
        $(#[$m])*
        pub struct $name { $($body)* }
    };
}

model! {
    pub struct GraphQl {
        pub data: Data,
    }
}

model! {
    pub struct Data {
        pub count: Count,
        pub orders: Vec<Order>,
    }
}

model! {
    #[serde(rename_all = "camelCase")]
    pub struct Count {
        pub id: String,
        pub order_total: u64,
        pub wearable_total: u64,
    }
}

model! {
    #[serde(rename_all = "camelCase")]
    pub struct Order {
        pub created_at: String,
        pub nft: Nft,
        pub price: String,
        pub status: String,
    }
}

model! {
    #[serde(rename_all = "camelCase")]
    pub struct Nft {
        pub bids: Vec<Bid>,
        pub search_is_land: bool,
        pub search_is_wearable_accessory: bool,
        pub search_text: String,
        pub wearable: Wearable,
    }
}

model! {
    #[serde(rename_all = "camelCase")]
    pub struct Bid {
        pub bidder: String,
        pub block_number: String,
        pub status: String,
    }
}

model! {
    #[serde(rename_all = "camelCase")]
    pub struct Wearable {
        pub body_shapes: Vec<String>,
        pub category: String,
        pub collection: String,
        pub name: String,
        pub owner: Owner,
        pub rarity: String,
        pub representation_id: String,
    }
}

model! {
    pub struct Owner {
        pub mana: String,
    }
}

model! {
    pub struct FeatureCollection {
        #[serde(rename = "type")]
        pub kind: String,
        pub features: Vec<Feature>,
    }
}

model! {
    pub struct Feature {
        #[serde(rename = "type")]
        pub kind: String,
        pub properties: Properties,
        pub geometry: Geometry,
    }
}

model! {
    #[allow(non_snake_case)]
    pub struct Properties {
        pub ADMIN: String,
        pub ISO_A3: String,
        pub ISO_A2: String,
    }
}

model! {
    /// Every geometry in the file is a MultiPolygon of [longitude, latitude] points.
    pub struct Geometry {
        #[serde(rename = "type")]
        pub kind: String,
        pub coordinates: Vec<Vec<Vec<(f64, f64)>>>,
    }
}

/// Selective load for serde peers: geometry is skipped with `IgnoredAny`
/// (fields in file order, so positional encodings line up too).
#[derive(Deserialize)]
pub struct CollectionProps {
    #[serde(rename = "type")]
    pub _kind: IgnoredAny,
    pub features: Vec<FeatureProps>,
}

#[derive(Deserialize)]
pub struct FeatureProps {
    #[serde(rename = "type")]
    pub _kind: IgnoredAny,
    pub properties: Properties,
    #[serde(rename = "geometry")]
    pub _geometry: IgnoredAny,
}

/// Selective load for Tree-Buf: a schema without geometry.
#[cfg(feature = "treebuf")]
#[derive(tree_buf::Decode)]
pub struct TbCollectionProps {
    pub features: Vec<TbFeatureProps>,
}

#[cfg(feature = "treebuf")]
#[derive(tree_buf::Decode)]
pub struct TbFeatureProps {
    pub properties: Properties,
}
