//! What the server and the front end exchange, as Rust types: the pages'
//! data, every route's loader data, the page bootstrap and what a render
//! returns. `client/lib/server-types.ts` is generated from these types
//! (ts-rs; the page ids come from the table, `client/lib/page-ids.ts`) and is
//! the only description of server data the client has, so a field renamed
//! here breaks the TypeScript build until the pages follow. A test fails
//! when the committed file is stale; `cargo test --lib write_server_types --
//! --ignored` rewrites it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

pub use crate::assets::{ImageSource, SiteImage};
pub use crate::content::blog::{Post, PostSummary};
pub use crate::content::communities::FeaturedCommunity;
pub use crate::content::routes::{DataPage, PageId};
pub use crate::intake::{FieldError, IntroForm};
pub use crate::payments::stripe::{
    PaymentState, PriceInterval, PriceRecord, ProductInfo, ProductMetadata, VerifiedSession,
};
pub use crate::team::TeamMember;

// PageData: build.rs makes it from content/routes.json (each route names
// its page, and a page with data the type of its data, one of those below).
include!(concat!(env!("OUT_DIR"), "/page_data.rs"));

impl PageData {
    /// The data of a page that has none to load; for a page with data,
    /// which one it is, for its loader.
    pub fn without_loader(page: PageId) -> Result<PageData, DataPage> {
        match DataPage::of(page) {
            Some(data) => Err(data),
            None => Ok(PageData::Plain(page)),
        }
    }
}

/// A route's loader result: its status and its page's data. Embedded in the
/// server-rendered page and served by `/api/route-data` for client-side
/// navigation.
#[derive(Debug, Serialize, TS)]
pub struct RouteData {
    pub status: u16,
    // Declared by hand in TypeScript (`& PageData`, server_types()).
    #[serde(flatten)]
    #[ts(skip)]
    pub data: PageData,
}

/// /wallets: the Featured Communities, already filtered and ordered.
#[derive(Debug, Serialize, TS)]
pub struct WalletsData {
    pub communities: Vec<FeaturedCommunity>,
}

/// /about: the team as last read (empty while the database fails).
#[derive(Debug, Serialize, TS)]
pub struct AboutData {
    pub team: Vec<TeamMember>,
}

/// /blog and /blog/:postId.
#[derive(Debug, Serialize, TS)]
pub struct BlogData {
    /// Every post, newest first (the page applies the filter).
    pub posts: Vec<PostSummary>,
    /// The post of /blog/:postId when it exists; otherwise the list shows.
    pub post: Option<Post>,
    /// The `?type=` filter, or null for All.
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// /pricing: Stripe's active prices.
#[derive(Debug, Serialize, TS)]
pub struct PricingData {
    /// Empty when Stripe is off or could not be read.
    pub prices: Vec<PriceRecord>,
    /// True when Stripe could not be reached.
    pub error: bool,
}

/// /contact, and the page a form post without JavaScript gets back.
#[derive(Debug, Serialize, TS)]
pub struct ContactData {
    /// `?submitted=1`: the form was stored.
    pub submitted: bool,
    /// Why a form post was refused.
    pub error: Option<String>,
    /// What that refused post held, to fill the form in again.
    pub values: Option<IntroForm>,
    /// The fields of that post to fix, each marked with what to do.
    pub fields: Vec<FieldError>,
}

/// /terms.
#[derive(Debug, Serialize, TS)]
pub struct TermsData {
    /// Today's date (UTC), `YYYY-MM-DD`.
    pub today: String,
}

/// /success?session_id=...
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SuccessData {
    pub session_id: Option<String>,
    pub state: PaymentState,
    /// The session, when paid or processing.
    pub session: Option<VerifiedSession>,
    /// Failed: the line under the heading.
    pub error: Option<String>,
    /// Failed because this visitor checked too often: seconds to wait.
    #[ts(type = "number | null")]
    pub retry_after: Option<u64>,
}

/// The JSON in the page's bootstrap tag, and the second argument of
/// `__ssr_render`: the route data, and the error screen's status when the
/// page's render threw (the client then shows that screen too).
#[derive(Debug, Serialize, TS)]
pub struct Bootstrap<'a> {
    #[serde(flatten)]
    pub route: &'a RouteData,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ErrorNotice>,
}

/// What a visitor is told when a page breaks: a status and its reason,
/// never the exception's own text (that goes to the log).
#[derive(Debug, Clone, Serialize, TS)]
pub struct ErrorNotice {
    pub status: u16,
    pub message: String,
}

/// What `__ssr_render(url, bootstrapJson)` returns.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct RenderOutput {
    pub status: u16,
    /// The page's title and meta description (plain text).
    pub title: String,
    pub description: String,
    /// The body markup that hydrates.
    pub html: String,
    /// The page that was rendered.
    #[ts(type = "PageId")]
    pub page: PageId,
    /// Set when the React render threw and the error screen was rendered.
    #[ts(optional)]
    pub error: Option<String>,
    /// The stack trace of that error, positions in the server bundle.
    #[ts(optional)]
    pub stack: Option<String>,
    /// The image the page paints first (a `<Picture priority>`), which
    /// its head preloads.
    #[serde(default)]
    #[ts(optional)]
    pub preload: Option<ImagePreload>,
}

/// A page's first image as its head preloads it, before any script runs:
/// a photo's best format (its `srcset`, the layout's `sizes` and its
/// type), or an SVG's URL.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
pub struct ImagePreload {
    pub href: String,
    #[ts(optional)]
    pub imagesrcset: Option<String>,
    #[ts(optional)]
    pub imagesizes: Option<String>,
    #[serde(rename = "type")]
    #[ts(optional)]
    pub kind: Option<String>,
}

/// The JSON body of `POST /api/create-checkout-session` (a plain form post
/// sends the same field).
#[derive(Debug, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckoutRequest {
    pub price_id: String,
}

/// `POST /api/create-checkout-session` with JSON: where Stripe Checkout
/// takes the visitor.
#[derive(Debug, Serialize, TS)]
pub struct CheckoutCreated {
    pub url: String,
}

/// `POST /api/save-to-notion` with JSON: the request is stored.
#[derive(Debug, Serialize, TS)]
pub struct IntroStored {
    #[ts(type = "true")]
    pub success: bool,
}

/// Every API failure: the message the visitor is shown (which field, why).
#[derive(Debug, Serialize, TS)]
pub struct ApiFailure {
    #[ts(type = "false")]
    pub success: bool,
    pub error: String,
    /// A refused form: each field to fix, with what to do.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<FieldError>>")]
    pub fields: Vec<FieldError>,
}

/// Where the generated declarations live, from the crate root.
pub const SERVER_TYPES_FILE: &str = "client/lib/server-types.ts";

/// The text of `client/lib/server-types.ts`.
pub fn server_types() -> String {
    let cfg = ts_rs::Config::default();
    let mut out = String::from(
        "// Generated from the Rust types of server/contract.rs by ts-rs: do not edit.\n\
         // `cargo test --lib write_server_types -- --ignored` rewrites this file; a\n\
         // test fails while it differs from what the Rust types say.\n\n\
         import type { PageId } from \"./page-ids\";\n",
    );
    let mut add = |docs: Option<String>, decl: String| {
        out.push('\n');
        if let Some(d) = docs {
            out.push_str(&d);
            if !d.ends_with('\n') {
                out.push('\n');
            }
        }
        out.push_str("export ");
        out.push_str(&decl);
        out.push('\n');
    };
    macro_rules! types {
        ($($t:ty),* $(,)?) => { $( add(<$t as TS>::docs(), <$t as TS>::decl(&cfg)); )* };
    }
    // The pages: their ids are the table's (client/build.mjs writes
    // client/lib/page-ids.ts from it); those with data are compiled in.
    add(
        Some("/**\n * Every page of the site: those `content/routes.json` names, and `NotFound`\n * (client/lib/page-ids.ts, which client/build.mjs makes from the table).\n */".into()),
        "type { PageId };".into(),
    );
    let data_pages: Vec<String> = DataPage::ALL
        .iter()
        .map(|p| format!("{:?}: {}", p.name(), p.data_type()))
        .collect();
    add(
        Some("/**\n * The pages whose loader gives data, each with its data's type.\n */".into()),
        format!("type DataPages = {{ {} }};", data_pages.join(", ")),
    );
    add(
        Some("/**\n * Each page with the data its loader gives it (the `data` type the table\n * names); a page without data carries only its name.\n */".into()),
        "type PageData = { [K in keyof DataPages]: { \"page\": K, \"data\": DataPages[K] } }[keyof DataPages] | { \"page\": Exclude<PageId, keyof DataPages> };".into(),
    );
    // The types that carry a page's data beside their own fields.
    let with_page = |decl: String| match decl.strip_suffix(';') {
        Some(fields) => format!("{fields} & PageData;"),
        None => decl,
    };
    add(
        <RouteData as TS>::docs(),
        with_page(<RouteData as TS>::decl(&cfg)),
    );
    add(
        <Bootstrap<'static> as TS>::docs(),
        with_page(<Bootstrap<'static> as TS>::decl(&cfg)),
    );
    types!(
        ErrorNotice,
        RenderOutput,
        ImagePreload,
        SiteImage,
        ImageSource,
        WalletsData,
        FeaturedCommunity,
        AboutData,
        TeamMember,
        BlogData,
        PostSummary,
        Post,
        PricingData,
        PriceRecord,
        PriceInterval,
        ProductInfo,
        ProductMetadata,
        ContactData,
        IntroForm,
        FieldError,
        TermsData,
        SuccessData,
        PaymentState,
        VerifiedSession,
        CheckoutRequest,
        CheckoutCreated,
        IntroStored,
        ApiFailure,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_types_path() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SERVER_TYPES_FILE)
    }

    #[test]
    fn the_committed_typescript_declarations_are_those_of_the_rust_types() {
        let have = std::fs::read_to_string(server_types_path()).unwrap_or_default();
        assert!(
            have == server_types(),
            "{SERVER_TYPES_FILE} is stale: the Rust types of server/contract.rs changed. \
             Run `cargo test --lib write_server_types -- --ignored`, then fix what `npx tsc --noEmit` reports."
        );
    }

    /// Not a check: the command that rewrites the file the test above
    /// compares (`cargo test --lib write_server_types -- --ignored`).
    #[test]
    #[ignore = "writes client/lib/server-types.ts; run it after changing a type of the contract"]
    fn write_server_types() {
        std::fs::write(server_types_path(), server_types()).unwrap();
    }

    #[test]
    fn a_page_is_any_name_of_the_table_and_the_pages_with_data_are_compiled_in() {
        // The spec's pages with data, written out: a page that gains or
        // loses its loader changes this list.
        let with_data: Vec<(&str, &str)> = DataPage::ALL
            .iter()
            .map(|p| (p.name(), p.data_type()))
            .collect();
        assert_eq!(
            with_data,
            [
                ("Wallets", "WalletsData"),
                ("About", "AboutData"),
                ("Blog", "BlogData"),
                ("Pricing", "PricingData"),
                ("Contact", "ContactData"),
                ("Terms", "TermsData"),
                ("Success", "SuccessData"),
            ]
        );
        assert_eq!(
            serde_json::to_value(PageId::NfcWallet).unwrap(),
            "NfcWallet"
        );
        // A page without data is a name, not a compiled variant.
        let events = PageId::from_name("Events").unwrap();
        assert_eq!(events.name(), "Events");
        assert_eq!(PageId::from_name("Events"), Some(events));
        assert_eq!(
            serde_json::from_str::<PageId>("\"Events\"").unwrap(),
            events
        );
        for bad in ["events", "Nfc wallet", "", "Blog/x"] {
            assert_eq!(PageId::from_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn pages_with_data_are_the_ones_with_a_loader() {
        assert!(matches!(
            PageData::without_loader(PageId::Home),
            Ok(PageData::Plain(PageId::Home))
        ));
        let events = PageId::from_name("Events").unwrap();
        assert!(matches!(
            PageData::without_loader(events),
            Ok(PageData::Plain(p)) if p == events
        ));
        assert_eq!(
            PageData::without_loader(PageId::Pricing).unwrap_err(),
            DataPage::Pricing
        );
        assert_eq!(DataPage::Pricing.page(), PageId::Pricing);
    }

    #[test]
    fn route_data_is_the_page_its_status_and_its_data() {
        let route = RouteData {
            status: 200,
            data: PageData::Terms(TermsData {
                today: "2026-11-24".into(),
            }),
        };
        assert_eq!(
            serde_json::to_value(&route).unwrap(),
            serde_json::json!({ "status": 200, "page": "Terms", "data": { "today": "2026-11-24" } })
        );
        let home = RouteData {
            status: 200,
            data: PageData::Plain(PageId::Home),
        };
        assert_eq!(
            serde_json::to_value(&home).unwrap(),
            serde_json::json!({ "status": 200, "page": "Home" })
        );
        assert_eq!(home.data.page(), PageId::Home);
    }
}
