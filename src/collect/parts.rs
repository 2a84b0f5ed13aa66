//! What features keep per thread and window beside its components (each thread's
//! frames): a thread's totals carry such parts, and the windows add, empty and copy
//! them as they do the components, without knowing what they are. A feature's
//! observer of the fold (`watch.rs`) writes its part into the open window's thread.

use std::any::Any;
use std::fmt::Debug;

/// A feature's part of one thread's totals in one window.
pub(crate) trait ThreadPart: Any + Send + Debug {
    /// Adds the same thread's part of a later window (`other` is of this type).
    fn add(&mut self, other: &dyn ThreadPart);
    /// Empties it, keeping its memory.
    fn clear(&mut self);
    /// Whether it holds nothing to show.
    fn is_empty(&self) -> bool;
    /// A copy of it.
    fn copy(&self) -> Box<dyn ThreadPart>;
}

/// A thread's parts, at most one of each type.
#[derive(Debug, Default)]
pub(crate) struct Parts(Vec<Box<dyn ThreadPart>>);

impl Clone for Parts {
    fn clone(&self) -> Parts {
        Parts(self.0.iter().map(|p| p.copy()).collect())
    }
}

impl Parts {
    /// The part of type `P`, if the thread has one.
    pub(crate) fn get<P: ThreadPart>(&self) -> Option<&P> {
        self.0
            .iter()
            .find_map(|p| (p.as_ref() as &dyn Any).downcast_ref())
    }

    /// The part of type `P`, made empty if the thread has none yet.
    pub(crate) fn get_or_default<P: ThreadPart + Default>(&mut self) -> &mut P {
        let at = match self
            .0
            .iter()
            .position(|p| (p.as_ref() as &dyn Any).is::<P>())
        {
            Some(at) => at,
            None => {
                self.0.push(Box::new(P::default()));
                self.0.len() - 1
            }
        };
        (self.0[at].as_mut() as &mut dyn Any)
            .downcast_mut()
            .expect("the part at `at` is a `P`")
    }

    /// Adds the same thread's parts of a later window, type by type.
    pub(super) fn add(&mut self, other: &Parts) {
        for theirs in &other.0 {
            let id = (theirs.as_ref() as &dyn Any).type_id();
            match (self.0.iter_mut()).find(|p| (p.as_ref() as &dyn Any).type_id() == id) {
                Some(mine) => mine.add(theirs.as_ref()),
                None => self.0.push(theirs.copy()),
            }
        }
    }

    /// Empties every part, keeping their memory.
    pub(super) fn clear(&mut self) {
        self.0.iter_mut().for_each(|p| p.clear());
    }

    /// Whether no part holds anything.
    pub(super) fn is_empty(&self) -> bool {
        self.0.iter().all(|p| p.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part that counts.
    #[derive(Clone, Debug, Default, PartialEq)]
    struct Count(u64);
    impl ThreadPart for Count {
        fn add(&mut self, other: &dyn ThreadPart) {
            if let Some(other) = (other as &dyn Any).downcast_ref::<Count>() {
                self.0 += other.0;
            }
        }
        fn clear(&mut self) {
            self.0 = 0;
        }
        fn is_empty(&self) -> bool {
            self.0 == 0
        }
        fn copy(&self) -> Box<dyn ThreadPart> {
            Box::new(self.clone())
        }
    }

    /// Another type of part.
    #[derive(Clone, Debug, Default, PartialEq)]
    struct Name(String);
    impl ThreadPart for Name {
        fn add(&mut self, other: &dyn ThreadPart) {
            if let Some(other) = (other as &dyn Any).downcast_ref::<Name>() {
                self.0.push_str(&other.0);
            }
        }
        fn clear(&mut self) {
            self.0.clear();
        }
        fn is_empty(&self) -> bool {
            self.0.is_empty()
        }
        fn copy(&self) -> Box<dyn ThreadPart> {
            Box::new(self.clone())
        }
    }

    #[test]
    fn parts_add_type_by_type_copy_and_empty_without_knowing_their_types() {
        let mut earlier = Parts::default();
        assert!(earlier.is_empty() && earlier.get::<Count>().is_none());
        earlier.get_or_default::<Count>().0 = 2;
        let mut later = Parts::default();
        later.get_or_default::<Count>().0 = 3;
        later.get_or_default::<Name>().0 = "b".into();
        earlier.add(&later);
        // The same type added up, a new one copied in; the later parts untouched.
        assert_eq!(earlier.get::<Count>(), Some(&Count(5)));
        assert_eq!(earlier.get::<Name>(), Some(&Name("b".into())));
        assert_eq!(later.get::<Count>(), Some(&Count(3)));
        let copy = earlier.clone();
        earlier.clear();
        assert!(earlier.is_empty());
        assert_eq!(earlier.get::<Count>(), Some(&Count(0)));
        assert_eq!(copy.get::<Count>(), Some(&Count(5)));
        assert!(!copy.is_empty());
    }
}
