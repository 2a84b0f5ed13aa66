#[latte::timed(mode = Mid, start = Hard)]
fn process_order() {}

fn main() {
    process_order();
}
