#[latte::timed(label = "order")]
fn process_order() {}

fn main() {
    process_order();
}
