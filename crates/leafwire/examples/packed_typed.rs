//! Profiling loop for the typed read of a packed document (the bench's GraphQL decode row):
//! `packed_typed ORDERS.json N` packs the GraphQL orders response and deserializes it N
//! times into structs matching it field for field (for callgrind or `time`).

use serde::Deserialize;

#[derive(Deserialize)]
#[allow(dead_code)]
struct GraphQl {
    data: Data,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Data {
    count: Count,
    orders: Vec<Order>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Count {
    id: String,
    order_total: u64,
    wearable_total: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Order {
    created_at: String,
    nft: Nft,
    price: String,
    status: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Nft {
    bids: Vec<Bid>,
    search_is_land: bool,
    search_is_wearable_accessory: bool,
    search_text: String,
    wearable: Wearable,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Bid {
    bidder: String,
    block_number: String,
    status: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Wearable {
    body_shapes: Vec<String>,
    category: String,
    collection: String,
    name: String,
    owner: Owner,
    rarity: String,
    representation_id: String,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Owner {
    mana: String,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read(&args[1]).expect("readable JSON file");
    let reps: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(10);
    let value = leafwire::json::parse(&text).expect("valid JSON");
    let packed = leafwire::encode_packed(&value, &leafwire::PackOptions::default()).expect("packs");
    let started = std::time::Instant::now();
    let mut orders = 0;
    for _ in 0..reps {
        let g: GraphQl = leafwire::from_slice_owned(&packed).expect("reads");
        orders += g.data.orders.len();
    }
    eprintln!("{orders} orders, {:?} per read", started.elapsed() / reps as u32);
}
