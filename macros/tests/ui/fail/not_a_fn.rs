#[latte::timed]
struct Order {
    price: u64,
}

fn main() {
    let _ = Order { price: 1 }.price;
}
