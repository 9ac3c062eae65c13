//! A stand-in Notion (wiremock): the database query by Request ID and page
//! creation, as the forwarder uses them; the token must be `secret_test`.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The Notion database id the stand-in answers for.
pub const DB_ID: &str = "db123";

/// A stand-in Notion database: query by Request ID, create pages. `fail_first`
/// page creations answer 500; every created page is recorded.
#[derive(Clone, Default)]
pub struct FakeNotion {
    /// The created pages' bodies.
    pub pages: Arc<Mutex<Vec<Value>>>,
    fail_first: Arc<Mutex<usize>>,
    /// Page creations asked for, failed ones included.
    pub creates: Arc<Mutex<usize>>,
    /// How long each page creation takes.
    delay: std::time::Duration,
}

impl FakeNotion {
    pub async fn start(fail_first: usize) -> (FakeNotion, MockServer) {
        FakeNotion::start_with(fail_first, std::time::Duration::ZERO).await
    }

    /// A stand-in whose page creations each take `delay`.
    pub async fn start_with(
        fail_first: usize,
        delay: std::time::Duration,
    ) -> (FakeNotion, MockServer) {
        let fake = FakeNotion {
            fail_first: Arc::new(Mutex::new(fail_first)),
            delay,
            ..Default::default()
        };
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/pages"))
            .respond_with(fake.clone())
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path(format!("/v1/databases/{DB_ID}/query")))
            .respond_with(fake.clone())
            .mount(&server)
            .await;
        (fake, server)
    }

    /// The Request ID of every created page, in order.
    pub fn request_ids(&self) -> Vec<String> {
        self.pages
            .lock()
            .unwrap()
            .iter()
            .map(|p| {
                p["properties"]["Request ID"]["rich_text"][0]["text"]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }
}

impl Respond for FakeNotion {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        assert_eq!(
            req.headers.get("authorization").unwrap(),
            "Bearer secret_test"
        );
        assert!(req.headers.get("notion-version").is_some());
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        if req.url.path().ends_with("/query") {
            let wanted = body["filter"]["rich_text"]["equals"]
                .as_str()
                .unwrap()
                .to_owned();
            let found: Vec<Value> = self
                .request_ids()
                .iter()
                .enumerate()
                .filter(|(_, id)| **id == wanted)
                .map(|(i, _)| json!({ "id": format!("page-{i}") }))
                .collect();
            return ResponseTemplate::new(200).set_body_json(json!({ "results": found }));
        }
        *self.creates.lock().unwrap() += 1;
        let mut fail = self.fail_first.lock().unwrap();
        if *fail > 0 {
            *fail -= 1;
            return ResponseTemplate::new(500)
                .set_body_json(json!({ "message": "Notion is having a bad day" }));
        }
        let mut pages = self.pages.lock().unwrap();
        pages.push(body);
        ResponseTemplate::new(200)
            .set_body_json(json!({ "object": "page", "id": format!("page-{}", pages.len() - 1) }))
            .set_delay(self.delay)
    }
}
