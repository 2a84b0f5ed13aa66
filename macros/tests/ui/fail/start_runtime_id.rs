// An id known only at run time: a parameter, a `String`, a `let` binding; and one
// given by reference (`&name`), whose error names `Id::intern`.
use latte::latte_start;

fn open(component: &str, owned: String) {
    latte_start!(component);
    latte_start!(owned.as_str(), Mid);
    let local = "parse";
    latte_start!(local);
    latte_start!(&owned);
}

fn main() {
    open("parse", String::from("parse"));
}
