use latte::{latte_scope, latte_start, latte_stop};

fn main() {
    latte_start!("parse", Slow);
    latte_stop!("parse", mid);
    let _scope = latte_scope!("parse", Fast, Hardest);
}
