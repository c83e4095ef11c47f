//! Small pure helpers shared by the client side and the embedded server (which may not
//! import each other): JSON field matching and `${var}` message templates.

pub mod jsonmatch;
pub mod template;
