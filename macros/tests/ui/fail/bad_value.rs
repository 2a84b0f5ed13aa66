#[latte::timed(mode = Slow)]
fn slow_mode() {}

#[latte::timed(name = 3)]
fn numeric_name() {}

fn main() {
    slow_mode();
    numeric_name();
}
