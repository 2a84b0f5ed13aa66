#[latte::timed]
const fn price() -> u64 {
    42
}

fn main() {
    let _ = price();
}
