//! Shard-local hand-over of values that are not `Send` (socket halves, the session host).
//!
//! `ThreadLocalActor` arguments must be `Send`, but awc's socket halves are not. The sample
//! supervisor parks a half here under a fresh typed key and passes the key to the child it
//! spawns on the same shard thread; the child takes it in `post_start`. A value never
//! leaves the thread that parked it. What can be parked is a closed set ([`Parked`]), so
//! taking a value back is a match, never a downcast.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::rc::Rc;

use super::host::WeakHost;
use super::outbox::{Outbox, SendPath};
use super::transport::WsStream;

/// Everything that can be parked.
pub enum Parked {
    /// A socket's write half, in its outbox (for the sender).
    Outbox(Rc<Outbox>),
    /// Where a sample's messages go (for the reader's pongs).
    Path(SendPath),
    /// A socket's read half.
    Stream(WsStream),
    /// The sample's session host, for the reader.
    Host(WeakHost),
    /// A test value.
    #[cfg(test)]
    Test(std::rc::Rc<i32>),
}

/// A type that can be parked: how it goes into [`Parked`] and comes back out.
pub trait Parkable: Sized + 'static {
    /// Wrap.
    fn into_parked(self) -> Parked;
    /// Unwrap (`None` for another variant).
    fn from_parked(p: Parked) -> Option<Self>;
}

/// `Parkable` for a type carried by one [`Parked`] variant.
macro_rules! parkable {
    ($($ty:ty => $variant:ident),+ $(,)?) => {$(
        impl Parkable for $ty {
            fn into_parked(self) -> Parked {
                Parked::$variant(self)
            }
            fn from_parked(p: Parked) -> Option<Self> {
                match p {
                    Parked::$variant(v) => Some(v),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        }
    )+};
}

parkable!(Rc<Outbox> => Outbox, SendPath => Path, WsStream => Stream, WeakHost => Host);
#[cfg(test)]
parkable!(std::rc::Rc<i32> => Test);

thread_local! {
    static SLOTS: RefCell<HashMap<u64, Parked>> = RefCell::new(HashMap::new());
    static NEXT: Cell<u64> = const { Cell::new(1) };
}

/// A key for a parked `T`; `Send`, so it can travel in actor arguments.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SlotKey<T>(u64, PhantomData<fn() -> T>);

impl<T> Clone for SlotKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SlotKey<T> {}

/// Park `value` on this thread and return its key.
pub fn park<T: Parkable>(value: T) -> SlotKey<T> {
    let key = NEXT.with(|n| {
        let k = n.get();
        n.set(k + 1);
        k
    });
    SLOTS.with(|s| s.borrow_mut().insert(key, value.into_parked()));
    SlotKey(key, PhantomData)
}

/// Take the value parked under `key` on this thread, if it is still there.
pub fn take<T: Parkable>(key: SlotKey<T>) -> Option<T> {
    SLOTS
        .with(|s| s.borrow_mut().remove(&key.0))
        .and_then(T::from_parked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn park_and_take_once() {
        let k = park(std::rc::Rc::new(5));
        assert_eq!(take(k).as_deref(), Some(&5));
        assert!(take(k).is_none());
    }
}
