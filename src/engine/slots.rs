//! Shard-local hand-over of values that are not `Send` (socket halves).
//!
//! `ThreadLocalActor` arguments must be `Send`, but awc's socket halves are not. The sample
//! supervisor parks a half here under a fresh key and passes the key to the child it spawns
//! on the same shard thread; the child takes it in `post_start`. A value never leaves the
//! thread that parked it.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

thread_local! {
    static SLOTS: RefCell<HashMap<u64, Box<dyn Any>>> = RefCell::new(HashMap::new());
    static NEXT: Cell<u64> = const { Cell::new(1) };
}

/// A key for a parked value; `Send`, so it can travel in actor arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SlotKey(u64);

/// Park `value` on this thread and return its key.
pub fn park<T: 'static>(value: T) -> SlotKey {
    let key = NEXT.with(|n| {
        let k = n.get();
        n.set(k + 1);
        k
    });
    SLOTS.with(|s| s.borrow_mut().insert(key, Box::new(value)));
    SlotKey(key)
}

/// Take the value parked under `key` on this thread, if it is there and of type `T`.
pub fn take<T: 'static>(key: SlotKey) -> Option<T> {
    SLOTS
        .with(|s| s.borrow_mut().remove(&key.0))
        .and_then(|b| b.downcast::<T>().ok())
        .map(|b| *b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn park_and_take_once() {
        let k = park(std::rc::Rc::new(5));
        assert_eq!(take::<std::rc::Rc<i32>>(k).as_deref(), Some(&5));
        assert!(take::<std::rc::Rc<i32>>(k).is_none());
    }
}
