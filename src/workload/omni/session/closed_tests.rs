use super::*;

#[test]
fn reads_like_the_websockets_exception() {
    assert_eq!(
        send_after_close(Some("1000")),
        "received 1000 (OK); then sent 1000 (OK)"
    );
    assert_eq!(
        send_after_close(Some("1005")),
        "received 1005 (no status received [internal]); then sent 1005 (no status received [internal])"
    );
    assert_eq!(
        send_after_close(Some("4999 gone away now")),
        "received 4999 (private use) gone away now; then sent 4999 (private use) gone away now"
    );
    assert_eq!(send_after_close(None), "no close frame received or sent");
}
