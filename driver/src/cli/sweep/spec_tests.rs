use std::path::Path;

use super::*;

fn points(text: &str) -> anyhow::Result<Vec<Point>> {
    let path = Path::new("sweep.toml");
    let file = parse(text, path)?;
    expand(&file, Path::new("."), "sweep.toml")
}

fn error(text: &str) -> String {
    format!("{:#}", points(text).expect_err("an error"))
}

#[test]
fn product_is_cartesian_last_axis_fastest() {
    let points = points(
        r#"
        [product]
        tiles = [64, 128]
        precision = ["f16", "fp8"]
        beam_width = [2, 4, 8]
        "#,
    )
    .unwrap();
    assert_eq!(points.len(), 12);
    assert_eq!(points[0].tiles, Some(64));
    assert_eq!(points[0].precision.as_deref(), Some("f16"));
    assert_eq!(points[0].beam_width, Some(2));
    assert_eq!(points[1].beam_width, Some(4));
    assert_eq!(points[3].precision.as_deref(), Some("fp8"));
    assert_eq!(points[6].tiles, Some(128));
    assert!(points
        .iter()
        .all(|p| p.finalists.is_none() && p.constraints.is_none()));
}

#[test]
fn explicit_points_follow_the_product_without_repeats() {
    let points = points(
        r#"
        [product]
        tiles = [64]
        precision = ["f16", "fp8"]

        [[point]]
        tiles = 64
        precision = "f16"

        [[point]]
        tiles = 32
        finalists = 1
        constraints = { name = "pin", ops = [{ op = 0, kind = "gemm_k_split", params = { grid = [1, 4, 3, 5] } }] }
        "#,
    )
    .unwrap();
    assert_eq!(
        points.len(),
        3,
        "the first explicit point repeats a product point"
    );
    let pinned = &points[2];
    assert_eq!(pinned.tiles, Some(32));
    let constraints = pinned.constraints.as_ref().unwrap();
    assert_eq!(constraints.name, "pin");
    assert_eq!(constraints.document["ops"][0]["params"]["grid"][3], 5);
    assert_eq!(constraints.document["ops"][0]["kind"], "gemm_k_split");
}

#[test]
fn json_sweep_files_read_the_same() {
    let path = Path::new("sweep.json");
    let file = parse(
        r#"{"product": {"tiles": [8, 16]}, "point": [{"precision": "f32"}]}"#,
        path,
    )
    .unwrap();
    let points = expand(&file, Path::new("."), "sweep.json").unwrap();
    assert_eq!(points.len(), 3);
    assert_eq!(points[2].precision.as_deref(), Some("f32"));
    let bad = parse(r#"{"product": {"tile": [8]}}"#, path).unwrap_err();
    let text = format!("{bad:#}");
    assert!(
        text.contains("sweep.json") && text.contains("unknown field `tile`"),
        "{text}"
    );
    assert!(text.contains("line 1"), "{text}");
}

#[test]
fn constraint_files_are_read_relative_to_the_sweep_file() {
    let dir = std::env::temp_dir().join(format!("ipu-sweep-spec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("k5.json"),
        r#"{"ops": [{"op": 0, "params": {"grid": [1, 4, 3, 5]}}]}"#,
    )
    .unwrap();
    std::fs::write(dir.join("bad.json"), r#"{"op": 0}"#).unwrap();
    let file = parse(
        "[product]\nconstraints = [{ name = \"free\" }, { name = \"k5\", file = \"k5.json\" }]\n",
        Path::new("s.toml"),
    )
    .unwrap();
    let points = expand(&file, &dir, "s.toml").unwrap();
    assert_eq!(points.len(), 2);
    assert!(points[0].constraints.as_ref().unwrap().document.is_null());
    assert_eq!(
        points[1].constraints.as_ref().unwrap().document["ops"][0]["op"],
        0
    );
    let file = parse(
        "[[point]]\nconstraints = { name = \"b\", file = \"bad.json\" }\n",
        Path::new("s.toml"),
    )
    .unwrap();
    let text = format!("{:#}", expand(&file, &dir, "s.toml").unwrap_err());
    assert!(
        text.contains("s.toml: point 1") && text.contains("no \"ops\" array"),
        "{text}"
    );
    let file = parse(
        "[[point]]\nconstraints = { name = \"m\", file = \"missing.json\" }\n",
        Path::new("s.toml"),
    )
    .unwrap();
    let text = format!("{:#}", expand(&file, &dir, "s.toml").unwrap_err());
    assert!(
        text.contains("cannot read") && text.contains("missing.json"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_name_the_file_and_the_place() {
    let text = error("[product]\ntiles = [64]\nbeam = [2]\n");
    assert!(text.starts_with("sweep.toml: "), "{text}");
    assert!(
        text.contains("unknown field `beam`") && text.contains("line 3"),
        "{text}"
    );
    let text = error("[product]\ntiles = [64\n");
    assert!(
        text.starts_with("sweep.toml: ") && text.contains("line 2"),
        "{text}"
    );
    let text = error("[produce]\ntiles = [64]\n");
    assert!(text.contains("unknown field `produce`"), "{text}");
    let text = error("[product]\ntiles = \"64\"\n");
    assert!(text.contains("line 2"), "{text}");
    assert!(error("").contains("the sweep is empty"));
    assert!(error("[product]\ntiles = []\n").contains("axis 'tiles' is empty"));
    let text = error("[product]\nprecision = [\"f16\", \"bf16\"]\n");
    assert!(
        text.contains("sweep.toml: [product]: precision 'bf16'"),
        "{text}"
    );
    let text = error("[[point]]\n[[point]]\nweight_memory = \"fast\"\n");
    assert!(text.contains("point 2: weight_memory 'fast'"), "{text}");
    assert!(error("[[point]]\nfinalists = 0\n").contains("finalists must be at least 1"));
    let text = error("[[point]]\nconstraints = { name = \"x\", file = \"a.json\", ops = [] }\n");
    assert!(text.contains("both 'file' and 'ops'"), "{text}");
    let text = error("[[point]]\nconstraints = { name = \"x\", ops = 3 }\n");
    assert!(text.contains("'ops' must be an array"), "{text}");
    assert!(error("[[point]]\nconstraints = { ops = [] }\n").contains("missing field `name`"));
}

#[test]
fn keys_are_stable_and_tell_points_apart() {
    let a = Point {
        tiles: Some(64),
        precision: Some("f16".into()),
        ..Point::default()
    };
    let mut b = a.clone();
    assert_eq!(a.key(), b.key());
    assert_eq!(a.id(), b.id());
    assert_eq!(a.id().len(), 16);
    b.tiles = Some(128);
    assert_ne!(a.key(), b.key());
    assert_ne!(a.id(), b.id());
    let mut c = a.clone();
    c.constraints = Some(Constraints {
        name: "pin".into(),
        document: serde_json::json!({"ops": [{"op": 0}]}),
    });
    let mut d = c.clone();
    d.constraints.as_mut().unwrap().document = serde_json::json!({"ops": [{"op": 1}]});
    assert_ne!(
        c.key(),
        d.key(),
        "the same name with other constraints is another point"
    );
    assert_eq!(
        a.key(),
        r#"{"tiles":64,"precision":"f16","weight_memory":null,"beam_width":null,"candidates_per_op":null,"finalists":null,"constraints":null}"#
    );
    let parsed: Point = serde_json::from_str(&c.key()).unwrap();
    assert_eq!(
        parsed.key(),
        c.key(),
        "a key read back from a results file matches"
    );
    assert_eq!(a.label(), "tiles=64 precision=f16");
    assert_eq!(Point::default().label(), "defaults");
}
