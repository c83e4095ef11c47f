//! What the session's readers take of an inbound event: its top-level string fields
//! borrowed, other top-level fields as `Value` reads them, and the whole event as a
//! `Value` for the rare reader that needs a nested one. `serde_json::Value` is one such
//! view; the session's typed, borrowed event (`session::event::Event`) is another, which
//! builds the `Value` only when a reader asks for it.

use std::borrow::Cow;

use serde_json::Value;

use super::response_id;

/// One event as the session's readers read it; every implementation reads as the event's
/// `serde_json::Value` does (a duplicate key: the last one).
pub trait EventView {
    /// Top-level field `key` when it is a string.
    fn str_field(&self, key: &str) -> Option<&str>;
    /// Top-level field `key`, as `Value` holds it (a number, bool or null read from a
    /// typed event costs no allocation; prefer [`EventView::str_field`] for strings).
    fn field(&self, key: &str) -> Option<Cow<'_, Value>>;
    /// Whether the event has a top-level field `key`.
    fn has(&self, key: &str) -> bool;
    /// The whole event as `Value` (a typed event builds it on first use).
    fn value(&self) -> &Value;

    /// The event's `type` (empty when absent or not a string).
    fn kind(&self) -> &str {
        self.str_field("type").unwrap_or("")
    }
    /// [`response_id`]: `response_id` when a string, else `response.id`.
    fn response_id(&self) -> Option<&str> {
        match self.str_field("response_id") {
            Some(id) => Some(id),
            None if self.has("response") => response_id(self.value()),
            None => None,
        }
    }
}

impl EventView for Value {
    fn str_field(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
    fn field(&self, key: &str) -> Option<Cow<'_, Value>> {
        self.get(key).map(Cow::Borrowed)
    }
    fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    fn value(&self) -> &Value {
        self
    }
}
