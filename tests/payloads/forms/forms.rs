//! Inner doc comment of the crate.

/// A free function with an outer doc comment.
pub fn free(a: u32) -> u32 {
    a // trailing comment keeps the line code
}

/* A block comment
   over two lines. */

/** A block doc comment. */
pub struct Counter {
    n: u32,
}

impl Counter {
    pub fn new() -> Self {
        Counter { n: 0 }
    }

    #[inline]
    pub fn add<T>(
        &mut self,
        by: u32,
    ) -> u32
    where
        T: Copy,
    {
        self.n += by;
        self.n
    }
}

pub trait Named {
    fn name(&self) -> String;

    fn greeting(&self) -> String {
        format!("hello {}", self.name())
    }
}

fn outer() -> u32 {
    fn inner(x: u32) -> u32 {
        x * 2
    }
    let closure = |y: u32| {
        y + 1
    };
    let text = "
// not a comment: a string
";
    inner(closure(text.len() as u32))
}

macro_rules! skipped {
    () => {
        fn generated() {}
    };
}

extern "C" {
    fn declared(x: i32) -> i32;
}
