use super::*;

#[test]
fn defaults_match_the_brief() {
    let cfg = ServerConfig::from_toml_str("").unwrap();
    assert_eq!(cfg, ServerConfig::default());
    assert_eq!(cfg.idle_timeout_s, 300.0);
    assert_eq!(cfg.workers, 1);
    let v = &cfg.video;
    assert_eq!(v.first_chunk_ms, 300.0);
    assert_eq!(v.chunk_interval_ms, 40.0);
    assert_eq!(v.jitter_ms, 0.0);
    assert_eq!(v.ramp_chunks, 6);
    assert_eq!(v.ramp_factor, 1.5);
    assert_eq!(v.seed, 0);
    assert_eq!(v.chunk_bytes, 4096);
    assert!(v.trailer);
    assert_eq!(v.max_frames, 765);
    assert_eq!(v.faults, VideoFaults::default());
}

#[test]
fn nested_tables_parse() {
    let cfg = ServerConfig::from_toml_str(
        "idle_timeout_s = 5.0\n[video]\nchunk_interval_ms = 10\n[video.faults]\nstall_after_chunks = 2\nerror_on_start = \"busy\"\n",
    )
    .unwrap();
    assert_eq!(cfg.idle_timeout_s, 5.0);
    assert_eq!(cfg.video.chunk_interval_ms, 10.0);
    assert_eq!(cfg.video.faults.stall_after_chunks, Some(2));
    assert_eq!(cfg.video.faults.error_on_start.as_deref(), Some("busy"));
}

#[test]
fn unknown_field_names_path_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.toml");
    std::fs::write(&path, "workers = 1\n[video]\n  chunk_intervall_ms = 3\n").unwrap();
    let err = ServerConfig::from_toml_file(&path).unwrap_err();
    let ServerError::Parse {
        line, col, message, ..
    } = &err
    else {
        panic!("expected a parse error, got {err:?}");
    };
    assert_eq!((*line, *col), (3, 3));
    assert!(message.contains("chunk_intervall_ms"), "{message}");
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!("{}:3:3: ", path.display())),
        "{shown}"
    );
}

#[test]
fn toml_round_trip() {
    let mut cfg = ServerConfig::default();
    cfg.video.faults.stall_after_chunks = Some(4);
    cfg.video.faults.error_on_start = Some("busy".into());
    let text = toml::to_string(&cfg).unwrap();
    assert_eq!(ServerConfig::from_toml_str(&text).unwrap(), cfg);
}

#[test]
fn missing_file_names_path() {
    let err = ServerConfig::from_toml_file("/nonexistent/rtload-server.toml").unwrap_err();
    assert!(matches!(err, ServerError::Read { .. }));
    assert!(err.to_string().contains("/nonexistent/rtload-server.toml"));
}

#[test]
fn out_of_range_values_are_rejected() {
    for text in [
        "workers = 0",
        "idle_timeout_s = 0.0",
        "[video]\nchunk_interval_ms = -1.0",
        "[video]\nmax_frames = 3",
        "[video]\nmax_frames = 99999999999",
        "idle_timeout_s = nan",
        "idle_timeout_s = inf",
        "[video]\njitter_ms = inf",
    ] {
        let err = ServerConfig::from_toml_str(text).unwrap_err();
        assert!(matches!(err, ServerError::Parse { .. }), "{text}: {err}");
    }
}

#[test]
fn duplex_defaults_match_the_brief() {
    let d = ServerConfig::from_toml_str("").unwrap().duplex;
    assert_eq!(d, DuplexServerConfig::default());
    assert_eq!(d.chunk_period_ms, 1000);
    assert_eq!(d.respond_every_s, 2.0);
    assert_eq!((d.audio_deltas, d.delta_ms), (5, 200));
    assert_eq!(d.rtf, 0.5);
    assert_eq!(d.first_response_delay_ms, 300.0);
    assert_eq!(d.listen_every_s, 0.0);
    assert!(!d.buffering_listens && d.deferred_commit && !d.require_acks);
    assert_eq!(d.final_decision, FinalDecision::Respond);
    assert_eq!(d.faults, DuplexFaults::default());
}

#[test]
fn duplex_tables_parse_and_round_trip() {
    let cfg = ServerConfig::from_toml_str(
        "[duplex]\nrespond_every_s = 0.2\nfinal_decision = \"listen\"\n[duplex.faults]\nexpire_after_s = 1.5\nduplicate_done = true\nonly_sessions = [1]\n",
    )
    .unwrap();
    assert_eq!(cfg.duplex.respond_every_s, 0.2);
    assert_eq!(cfg.duplex.final_decision, FinalDecision::Listen);
    assert_eq!(cfg.duplex.faults.expire_after_s, Some(1.5));
    assert!(cfg.duplex.faults.for_session(1).duplicate_done);
    assert_eq!(cfg.duplex.faults.for_session(0), DuplexFaults::default());
    let text = toml::to_string(&cfg).unwrap();
    assert_eq!(ServerConfig::from_toml_str(&text).unwrap(), cfg);
}

#[test]
fn duplex_out_of_range_values_are_rejected() {
    for text in [
        "[duplex]\nchunk_period_ms = 0",
        "[duplex]\nrespond_every_s = 0.0",
        "[duplex]\naudio_deltas = 0",
        "[duplex]\ndelta_ms = 0",
        "[duplex]\nrtf = -0.5",
        "[duplex]\nlisten_every_s = nan",
        "[duplex]\ntone_hz = 0.0",
        "[duplex.faults]\nexpire_after_s = -1.0",
    ] {
        let err = ServerConfig::from_toml_str(text).unwrap_err();
        assert!(matches!(err, ServerError::Parse { .. }), "{text}: {err}");
        assert!(err.to_string().contains("duplex."), "{err}");
    }
    let err = ServerConfig::from_toml_str("[duplex]\nfinal_decision = \"maybe\"").unwrap_err();
    assert!(matches!(err, ServerError::Parse { line: 2, .. }), "{err}");
}

/// A scenario file is taken as is: its `[server]` table is the config (the rest of the
/// scenario is not read here), and an error inside it is positioned in the file.
#[test]
fn a_scenario_files_server_table_is_the_config() {
    let text = "name = \"x\"\n[workload]\nkind = \"video-cadence\"\n[load]\nsamples = 1\n\
                [server]\nworkers = 2\n[server.video]\nchunk_interval_ms = 10\n";
    let cfg = ServerConfig::from_toml_str(text).unwrap();
    assert_eq!(cfg.workers, 2);
    assert_eq!(cfg.video.chunk_interval_ms, 10.0);
    let bad = text.replace("chunk_interval_ms = 10", "chunk_intervall_ms = 10");
    let ServerError::Parse { line, message, .. } = ServerConfig::from_toml_str(&bad).unwrap_err()
    else {
        panic!("not a parse error")
    };
    assert_eq!(line, 9, "{message}");
    assert!(message.contains("chunk_interval_ms"), "{message}");
    let range = text.replace("workers = 2", "workers = 0");
    let ServerError::Parse { line, message, .. } = ServerConfig::from_toml_str(&range).unwrap_err()
    else {
        panic!("not a parse error")
    };
    assert_eq!((line, message.contains("workers")), (7, true), "{message}");
    // A server config without a `[server]` table reads as before.
    assert_eq!(
        ServerConfig::from_toml_str("workers = 3\n")
            .unwrap()
            .workers,
        3
    );
}

#[test]
fn the_load_model_is_max_one_active_over_k_and_monotone() {
    let none = LoadConfig::default();
    assert_eq!(none.factor(1000), 1.0, "no model: no slow-down");
    let k = LoadConfig {
        rtf_one_at_sessions: Some(16),
    };
    assert_eq!(k.factor(0), 1.0);
    assert_eq!(k.factor(16), 1.0);
    assert_eq!(k.factor(24), 1.5);
    assert_eq!(k.factor(32), 2.0);
    let mut last = 0.0;
    for active in 0..200 {
        let f = k.factor(active);
        assert!(f >= last && f >= 1.0);
        last = f;
    }
}

#[test]
fn capacity_keys_are_range_checked_at_their_values() {
    for (text, key) in [
        ("max_sessions = 0\n", "max_sessions must be at least 1"),
        (
            "retry_after_s = 3601\n",
            "retry_after_s must be between 0 and 3600",
        ),
        (
            "[load]\nrtf_one_at_sessions = 0\n",
            "load.rtf_one_at_sessions must be at least 1",
        ),
    ] {
        let err = ServerConfig::from_toml_str(text).unwrap_err().to_string();
        assert!(err.contains(key), "{text}: {err}");
    }
    let ok = ServerConfig::from_toml_str(
        "max_sessions = 24\nrefuse_with = \"http_429\"\nretry_after_s = 0\n[load]\nrtf_one_at_sessions = 16\n",
    )
    .unwrap();
    assert_eq!(ok.refuse_with, Some(RefuseWith::Http429));
    let bad = ServerConfig::from_toml_str("refuse_with = \"close\"\n").unwrap_err();
    assert!(bad.to_string().contains("http_429"), "{bad}");
}
