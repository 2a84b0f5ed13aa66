// An id known only at run time: a parameter, a `String`, a `let` binding.
use latte::latte_start;

fn open(component: &str, owned: String) {
    latte_start!(component);
    latte_start!(owned.as_str(), Mid);
    let local = "parse";
    latte_start!(local);
}

fn main() {
    open("parse", String::from("parse"));
}
