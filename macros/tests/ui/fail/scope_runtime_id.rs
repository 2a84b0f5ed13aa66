// An id known only at run time: a parameter, a `String`, a `let` binding; and one
// given by reference (`&name`), whose error names `Id::intern`.
use latte::latte_scope;

fn handle(component: &str, owned: String) {
    let _a = latte_scope!(component);
    let _b = latte_scope!(owned.as_str(), Mid);
    let local = "handle";
    let _c = latte_scope!(local, Fast, Hard);
    let _d = latte_scope!(&owned, Fast, Hard);
}

fn main() {
    handle("handle", String::from("handle"));
}
