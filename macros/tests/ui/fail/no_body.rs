trait Venue {
    #[latte::timed]
    fn fee(&self) -> u64;
}

fn main() {}
