// An id known only at run time: a parameter, a `String`, a `let` binding; and one
// given by reference (`&name`), whose error names `Id::intern`.
use latte::latte_pulse;

fn tick(component: &str, owned: String) {
    latte_pulse!(component);
    latte_pulse!(owned.as_str());
    let local = "poll";
    latte_pulse!(local);
    latte_pulse!(&component);
}

fn main() {
    tick("poll", String::from("poll"));
}
