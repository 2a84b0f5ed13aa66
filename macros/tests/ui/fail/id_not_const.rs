// Ids that are not constants: a call of a function that is not `const`, a `String`
// made at run time, a value of the wrong type.
use latte::{latte_pulse, latte_start, latte_stop};

fn component() -> &'static str {
    "parse"
}

fn main() {
    latte_start!(component());
    latte_stop!(format!("parse-{}", 1).as_str());
    latte_pulse!(42);
}
