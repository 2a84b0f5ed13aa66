// An id known only at run time: a parameter, a `String`, a `let` binding; and one
// given by reference (`&name`), whose error names `Id::intern`.
use latte::latte_stop;

fn close(component: &str, owned: String) {
    latte_stop!(component);
    latte_stop!(owned.as_str(), Mid);
    let local = "parse";
    latte_stop!(local);
    latte_stop!(&owned, Mid);
}

fn main() {
    close("parse", String::from("parse"));
}
