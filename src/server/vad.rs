//! A speech detector for the embedded server's endpoints: speech or not, judged message
//! by message on the RMS level of its PCM16 (`[server.duplex.vad]`, `[server.scripted]
//! speech`). Pure: levels and byte counts in.

/// Speech or not, judged chunk by chunk.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Vad {
    /// Linear RMS (of i16 samples) from which a chunk is speech.
    threshold_rms: f64,
    /// Quiet input that ends speech, bytes.
    silence_bytes: u64,
    speaking: bool,
    quiet_bytes: u64,
}

/// What one chunk changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Heard {
    /// Nothing.
    Same,
    /// Speech started with this chunk.
    Started,
    /// Speech ended: the quiet began `quiet_bytes` before the end of this chunk.
    Stopped {
        /// Quiet input received since speech ended, bytes.
        quiet_bytes: u64,
    },
}

impl Vad {
    /// Speech from `threshold_dbfs` (0 dBFS: a full-scale square wave), ended by
    /// `silence_bytes` of quieter input.
    pub(crate) fn new(threshold_dbfs: f64, silence_bytes: u64) -> Vad {
        Vad {
            threshold_rms: 32_768.0 * 10f64.powf(threshold_dbfs / 20.0),
            silence_bytes,
            speaking: false,
            quiet_bytes: 0,
        }
    }

    /// One chunk of `bytes` PCM at level `rms`.
    pub(crate) fn feed(&mut self, rms: f64, bytes: u64) -> Heard {
        if rms >= self.threshold_rms {
            self.quiet_bytes = 0;
            let started = !std::mem::replace(&mut self.speaking, true);
            return if started { Heard::Started } else { Heard::Same };
        }
        self.quiet_bytes = self.quiet_bytes.saturating_add(bytes);
        if self.speaking && self.quiet_bytes >= self.silence_bytes {
            self.speaking = false;
            return Heard::Stopped {
                quiet_bytes: self.quiet_bytes,
            };
        }
        Heard::Same
    }
}
