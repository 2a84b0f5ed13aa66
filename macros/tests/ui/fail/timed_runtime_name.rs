// `name` known only at run time: a parameter of the timed function, a call of a
// function that is not `const`.
fn component() -> &'static str {
    "parse"
}

#[latte::timed(name = component)]
fn parse(component: &str) -> usize {
    component.len()
}

#[latte::timed(name = component())]
fn handle() {}

fn main() {
    parse("x");
    handle();
    Book.insert();
}

struct Book;

impl Book {
    #[latte::timed(name = self)]
    fn insert(&self) {}
}
