//! The GUI's "Fetch prices" through the router (`fetchPrices`, docs/gui-api.md): the shelf's
//! source over loopback fills the stub template's rates in `world.json` and in the running
//! village, `/api/stats` then carries the prices' date; a malformed table is 502
//! `PRICING_MALFORMED` naming the field, and `world.json` stays byte for byte.

use axum::http::StatusCode;
use fuseforks_testkit::stub::{StubReply, StubServer};
use serde_json::json;

use crate::gui::Fx;

#[tokio::test]
async fn fetch_prices_fills_the_templates_or_writes_nothing() {
    let llm = StubServer::start(vec![]).await;
    let fx = Fx::new(&llm).await;
    let bad = json!({"asOf": "2026-11-01", "models": {"stub-model": {"inputPerMtok": 1, "outputPerMtok": "free"}}});
    let good = json!({"asOf": "2026-11-01", "models": {"stub-model": {"inputPerMtok": 2.5, "outputPerMtok": 10}}});
    let prices = StubServer::start(vec![
        StubReply::json(200, &bad),
        StubReply::json(200, &good),
    ])
    .await;
    std::fs::write(
        fx.data.data_dir().join("pricing.json"),
        json!({"url": format!("{}/prices.json", prices.base_url())}).to_string(),
    )
    .unwrap();
    let world = || std::fs::read(fx.data.workspace().join("world.json")).unwrap();
    let before = world();
    let (status, body) = fx.command(json!({"type": "fetchPrices"})).await;
    assert_eq!(
        (status, Fx::code(&body)),
        (StatusCode::BAD_GATEWAY, "PRICING_MALFORMED"),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("models.stub-model.outputPerMtok"),
        "{body}"
    );
    assert_eq!(world(), before, "nothing written");
    let (status, body) = fx.command(json!({"type": "fetchPrices"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (
            &body["templates"][0]["outcome"],
            &body["templates"][0]["after"]["inputPerMtok"]
        ),
        (&json!("updated"), &json!(2.5))
    );
    let on_disk: serde_json::Value = serde_json::from_slice(&world()).unwrap();
    assert_eq!(on_disk["modelTemplates"][0]["pricingAsOf"], "2026-11-01");
    let running = fx.state.orchestrator.world();
    assert_eq!(
        running.model_templates[0].output_per_mtok,
        Some(10.0),
        "in effect"
    );
    let (status, stats) = fx.read("/api/stats").await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(
        stats["pricingAsOf"],
        serde_json::Value::Null,
        "no priced row yet"
    );
    assert_eq!(prices.requests().len(), 2);
}
