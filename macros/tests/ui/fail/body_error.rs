// Errors in the body point at the user's code, not at the attribute.
#[latte::timed]
fn parse(text: &str) -> u32 {
    let n: u32 = text.parse()?;
    n
}

#[latte::timed]
async fn fetch() -> u32 {
    "not a number"
}

fn main() {
    let _ = parse("1");
    let _ = fetch();
}
