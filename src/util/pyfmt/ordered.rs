//! Python `repr()` of JSON text with every object in the order its keys appear in the
//! text, as `repr(json.loads(text))` prints it. The crate's `serde_json::Value` sorts
//! keys (and must keep doing so for every other output), so this parses once more into
//! an order-keeping tree; used for the few messages that quote a server event.

use std::collections::HashMap;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::{py_repr, py_repr_str};

/// A JSON value whose objects keep their keys in text order.
enum Node {
    Leaf(Value),
    List(Vec<Node>),
    Dict(Vec<(String, Node)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Leaf(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Leaf(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Leaf(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Leaf(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Leaf(Value::String(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Leaf(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Leaf(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Leaf(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(n) = seq.next_element::<Node>()? {
            items.push(n);
        }
        Ok(Node::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        // A repeated key keeps its first position and its last value, as a Python dict.
        let mut items: Vec<(String, Node)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value::<Node>()?;
            match index.get(&k) {
                Some(&i) => items[i].1 = v,
                None => {
                    index.insert(k.clone(), items.len());
                    items.push((k, v));
                }
            }
        }
        Ok(Node::Dict(items))
    }
}

fn repr(n: &Node, out: &mut String) {
    match n {
        Node::Leaf(v) => out.push_str(&py_repr(v)),
        Node::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr(item, out);
            }
            out.push(']');
        }
        Node::Dict(items) => {
            out.push('{');
            for (i, (k, v)) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&py_repr_str(k));
                out.push_str(": ");
                repr(v, out);
            }
            out.push('}');
        }
    }
}

/// `repr(json.loads(text))`: objects keep the text's key order. `None` when `text` is
/// not JSON.
pub fn py_repr_json(text: &str) -> Option<String> {
    let node: Node = serde_json::from_str(text).ok()?;
    let mut out = String::with_capacity(text.len());
    repr(&node, &mut out);
    Some(out)
}

#[cfg(test)]
mod tests;
