#[latte::timed(name = "a", mode = Mid, name = "b")]
fn process_order() {}

fn main() {
    process_order();
}
