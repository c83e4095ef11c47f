//! Tests of the video session state machine.
