//! Text table columns: one number format per column.

use super::*;

#[test]
fn columns_format_alike() {
    assert_eq!(
        fmt_column(&[Some(3.0), None, Some(12.0)]),
        vec!["3", "-", "12"]
    );
    assert_eq!(fmt_column(&[Some(0.5), Some(0.25)]), vec!["0.500", "0.250"]);
    assert_eq!(fmt_column(&[Some(0.5), Some(2.0)]), vec!["0.50", "2.00"]);
    assert_eq!(
        fmt_column(&[Some(f64::INFINITY), Some(1.0)]),
        vec!["inf", "1"]
    );
}
