//! Every screen's spec texts and figures, on the server-rendered HTML (what a
//! visitor without JavaScript and a crawler see). Spec sections 1-5 and 9.

use crate::api::helpers::{element, links, spawn_app, visible_text, TestApp};

async fn main_of(app: &TestApp, path: &str) -> (String, Vec<(String, String)>, String) {
    let (status, html) = app.get_text(path).await;
    assert_eq!(status, 200, "{path}");
    let main = element(&html, "main").to_owned();
    (visible_text(&main), links(&main), html)
}

fn assert_all(text: &str, expected: &[&str], what: &str) {
    let missing: Vec<&&str> = expected.iter().filter(|e| !text.contains(**e)).collect();
    assert!(
        missing.is_empty(),
        "{what}: missing {missing:?}\n--- text ---\n{text}"
    );
}

/// The first `<tag ...>` start tag containing `needle`.
fn start_tag<'a>(html: &'a str, tag: &str, needle: &str) -> &'a str {
    let at = html
        .find(needle)
        .unwrap_or_else(|| panic!("no <{tag}> with {needle}"));
    let start = html[..at].rfind(&format!("<{tag} ")).unwrap();
    &html[start..at + html[at..].find('>').unwrap()]
}

/// External links (http/https) must open in a new tab without the opener.
fn assert_external_links_open_new_tabs(html: &str, what: &str) {
    let mut rest = html;
    while let Some(i) = rest.find("<a ") {
        let tag = &rest[i..i + rest[i..].find('>').unwrap()];
        if tag.contains(r#"href="http"#) {
            assert!(
                tag.contains(r#"target="_blank""#) && tag.contains("noopener"),
                "{what}: {tag}"
            );
        }
        rest = &rest[i + 3..];
    }
}

#[tokio::test]
async fn home() {
    let app = crate::api::helpers::spawn_app().await;
    let (text, links, html) = main_of(&app, "/").await;
    assert!(html.contains(r#"id="features""#));
    assert_all(
        &text,
        &[
            "Brussels Pay",
            "The wallet for your community currency",
            "Simple Transactions",
            "Voucher System",
            "Web Burner Wallet",
            "Simple Backup",
            "NFC Wallets",
            "Point of Sale",
            "Payment Requests",
            "Multi-Currency",
            "Cross-Chain Support",
            "Core",
            "Physical",
            "Business",
            "Technical",
            "Live",
            "Local Currency",
            "Mutual Credit Systems",
            "Alternative Payment Network",
            "Event Tokens",
            "Loyalty Programs",
            "Reward Mechanisms",
            "Ethereum",
            "Polygon",
            "Celo",
            "Base",
            "Gnosis",
            "Supported Blockchains",
            "Multiple Payment Options",
            "Physical Vouchers",
            "Contact Directory",
            "NFC Tags and Cards",
            "QR Codes",
            "Why yet another crypto wallet?",
            "Want your own wallet for your community token?",
            "Book a Call",
            "Join Discord Community",
        ],
        "home",
    );
    assert!(text.matches("Live").count() >= 9, "nine Live badges");
    let hrefs: Vec<&str> = links.iter().map(|(h, _)| h.as_str()).collect();
    assert!(
        hrefs
            .iter()
            .any(|h| h.starts_with("https://apps.apple.com/")),
        "App Store button"
    );
    assert!(
        hrefs
            .iter()
            .any(|h| h.starts_with("https://play.google.com/")),
        "Google Play button"
    );
    for name in ["Ethereum", "Polygon", "Celo", "Base", "Gnosis"] {
        assert!(
            html.contains(&format!(r#"alt="{name}"#))
                || html.contains(&format!("alt=\"{name} logo\"")),
            "{name} logo"
        );
    }
    assert_external_links_open_new_tabs(&html, "home");
}

#[tokio::test]
async fn wallets() {
    let app = spawn_app().await;
    let (text, links, html) = main_of(&app, "/wallets").await;
    assert_all(
        &text,
        &[
            "Our Wallets",
            "10K+",
            "50K+",
            "5K+",
            "2K+",
            "Featured Communities",
        ],
        "wallets",
    );
    for href in ["/mobile-app", "/nfc-wallet", "/discord-wallet"] {
        assert!(links.iter().any(|(h, _)| h == href), "card links to {href}");
    }
    let burner = start_tag(&html, "a", r#"href="https://app.citizenwallet.xyz""#);
    assert!(
        burner.contains(r#"target="_blank""#),
        "web burner wallet opens in a new tab: {burner}"
    );
    assert_external_links_open_new_tabs(&html, "wallets");

    // Spec section 3: each product card shows its image, sized up front (no
    // layout shift), and the app serves it.
    let start = html
        .find(r#"id="products-title""#)
        .expect("the products section");
    let products = &html[start
        ..start
            + html[start..]
                .find(r#"id="communities-title""#)
                .expect("the communities section")];
    assert_eq!(
        products.matches("<img ").count(),
        4,
        "one image per product card"
    );
    for (i, alt) in [
        "A phone showing a token balance with send and receive buttons",
        "A browser window with a wallet balance next to a QR code voucher",
        "A contactless card tapped against a phone showing a completed payment",
        "A chat message in which a bot sends tokens to a member",
    ]
    .into_iter()
    .enumerate()
    {
        let tag = start_tag(products, "img", &format!(r#"alt="{alt}""#));
        for attr in [r#"width="480""#, r#"height="240""#] {
            assert!(tag.contains(attr), "{alt}: {attr} in {tag}");
        }
        // The first card's image is in the first screen: loaded at once, the rest lazily.
        let loading = if i == 0 {
            r#"loading="eager""#
        } else {
            r#"loading="lazy""#
        };
        assert!(tag.contains(loading), "{alt}: {loading} in {tag}");
        let src = attr_value(tag, "src");
        assert!(
            src.starts_with("/assets/") && src.ends_with(".svg"),
            "{alt}: {src}"
        );
        let res = app.get(src).await;
        assert_eq!(res.status(), 200, "{src}");
        assert_eq!(res.headers()["content-type"], "image/svg+xml", "{src}");
        let svg = res.text().await.unwrap();
        assert!(
            svg.contains(r#"viewBox="0 0 480 240""#),
            "{src}: the card's 2:1 illustration"
        );
    }
}

/// The value of `name="..."` in a start tag.
fn attr_value<'a>(tag: &'a str, name: &str) -> &'a str {
    let key = format!(r#" {name}=""#);
    let from = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + key.len();
    &tag[from..from + tag[from..].find('"').unwrap()]
}

#[tokio::test]
async fn services() {
    let app = spawn_app().await;
    let (text, _, _) = main_of(&app, "/services").await;
    assert_all(
        &text,
        &[
            "Our Services",
            "Custom Wallet Setup",
            "From $5,000",
            "2-4 weeks",
            "API Integration",
            "From $2,500",
            "1-2 weeks",
            "Smart Contract Development",
            "From $10,000",
            "4-8 weeks",
            "Community Onboarding",
            "From $3,000",
            "2-3 weeks",
            "Security Audit",
            "From $7,500",
            "Premium Support",
            "$500/month",
            "Immediate",
            "Starter",
            "$10,000",
            "3 months support",
            "Professional",
            "$25,000",
            "Most Popular",
            "6 months premium support",
            "Enterprise",
            "Contact Sales",
            "Get Started",
        ],
        "services",
    );
    assert_eq!(
        text.matches("Get Started").count(),
        2,
        "Starter and Professional"
    );
}

#[tokio::test]
async fn about_with_an_empty_and_a_filled_team() {
    let app = spawn_app().await;
    let (text, links, html) = main_of(&app, "/about").await;
    assert_all(
        &text,
        &[
            "About",
            "Our Mission",
            "Our Values",
            "Accessibility First",
            "Community Driven",
            "Transparency",
            "Sustainability",
            "Meet Our Team",
            "Our Journey",
            "2020",
            "Foundation",
            "2021",
            "First Launch",
            "2022",
            "Multi-chain Support",
            "2023",
            "NFC Integration",
            "2024",
            "Brussels Pay Launch",
            "Supported By",
            "Get in touch",
            "Join Our Mission",
            "Start Your Community",
            "Join Our Team",
        ],
        "about",
    );
    assert!(
        !text.contains("Loading team data..."),
        "the server renders the loaded team"
    );
    // The embedded sample team (no photos: emoji or initials).
    assert!(text.contains("Amina Diallo") && text.contains("Community Lead"));
    assert!(links
        .iter()
        .any(|(h, t)| h.starts_with("mailto:") && t == "Get in touch"));
    for category in [
        "Funding Partner",
        "Strategic Partner",
        "Community Partner",
        "Ecosystem Partner",
    ] {
        assert!(text.contains(category), "{category}");
    }
    assert_external_links_open_new_tabs(&html, "about");
    // The Join Our Mission buttons do nothing: buttons, not links.
    assert!(
        html.contains(">Start Your Community</button>") && html.contains(">Join Our Team</button>")
    );
}

#[tokio::test]
async fn community() {
    let app = spawn_app().await;
    let (text, links, html) = main_of(&app, "/community").await;
    assert_all(
        &text,
        &[
            "Join Our Community",
            "Connect With Us",
            "2.5K",
            "5K",
            "800",
            "Join Now",
            "Community Resources",
            "Documentation",
            "Video Tutorials",
            "Community Forum",
            "Webinars",
            "Access",
            "What Our Community Says",
        ],
        "community",
    );
    assert_eq!(
        links.iter().filter(|(_, t)| t.contains("Join Now")).count(),
        3
    );
    assert!(
        html.matches("Rated 5 out of 5").count() >= 3,
        "5-star testimonials"
    );
    assert_external_links_open_new_tabs(&html, "community");
}

#[tokio::test]
async fn nfc_mobile_and_discord_wallet_pages() {
    let app = spawn_app().await;
    let (text, links, html) = main_of(&app, "/nfc-wallet").await;
    assert_all(
        &text,
        &[
            "NFC Wallet",
            "Participants",
            "Organisers",
            "Sales Points",
            "Get Started",
            "Contact Sales",
        ],
        "nfc",
    );
    let iframe = &html[html.find("<iframe").expect("embedded video")..];
    assert!(
        iframe.contains(r#"width="640""#) && iframe.contains(r#"height="360""#),
        "640x360 video"
    );
    assert!(
        links
            .iter()
            .any(|(h, _)| h.starts_with("https://dashboard.")),
        "live dashboard link"
    );
    assert_external_links_open_new_tabs(&html, "nfc");

    let (text, links, html) = main_of(&app, "/mobile-app").await;
    assert_all(
        &text,
        &["Mobile App", "Digital Vouchers", "QR Codes", "Contacts"],
        "mobile",
    );
    assert!(links
        .iter()
        .any(|(h, _)| h.starts_with("https://apps.apple.com/")));
    assert!(links
        .iter()
        .any(|(h, _)| h.starts_with("https://play.google.com/")));
    assert_external_links_open_new_tabs(&html, "mobile");

    let (text, links, html) = main_of(&app, "/discord-wallet").await;
    assert_all(
        &text,
        &["Discord Wallet", "/send", "/balance", "Book a Call"],
        "discord",
    );
    assert!(links
        .iter()
        .any(|(h, t)| h.starts_with("https://cal.com/") && t.contains("Book a Call")));
    assert_external_links_open_new_tabs(&html, "discord");
}

#[tokio::test]
async fn ctzn_token_page() {
    let app = spawn_app().await;
    let (text, links, html) = main_of(&app, "/ctzn").await;
    assert_all(
        &text,
        &[
            "CTZN Token",
            "6,943,851",
            "$0.07741",
            "$536K",
            "228+",
            "$15,322",
            "Development",
            "40%",
            "Community Rewards",
            "30%",
            "Team and Advisors",
            "20%",
            "Liquidity and Operations",
            "10%",
            "15%",
            "Buy CTZN",
        ],
        "ctzn",
    );
    assert!(html.contains("<iframe"), "embedded price chart");
    assert!(
        links
            .iter()
            .any(|(h, _)| h.starts_with("https://app.uniswap.org/")),
        "DEX buy link"
    );
    assert_external_links_open_new_tabs(&html, "ctzn");
}

#[tokio::test]
async fn legal_and_cancel_pages() {
    let app = spawn_app().await;
    let (text, _, _) = main_of(&app, "/privacy").await;
    assert_all(&text, &["Privacy Policy", "January 2024"], "privacy");

    // Terms show today's date in long US format (UTC).
    let today = time::OffsetDateTime::now_utc().date();
    let month = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ][u8::from(today.month()) as usize - 1];
    let (text, _, _) = main_of(&app, "/terms").await;
    assert_all(
        &text,
        &[
            "Terms of Service",
            &format!("{month} {}, {}", today.day(), today.year()),
        ],
        "terms",
    );

    let (text, links, _) = main_of(&app, "/cancel").await;
    assert_all(
        &text,
        &["Payment Cancelled", "no charge was made"],
        "cancel",
    );
    assert!(
        links.iter().any(|(h, _)| h == "/pricing") && links.iter().any(|(h, _)| h == "/contact")
    );
}

#[tokio::test]
async fn pricing_without_stripe_shows_contact_us_for_every_plan() {
    let app = spawn_app().await;
    for query in ["", "?billing=yearly"] {
        let (text, links, html) = main_of(&app, &format!("/pricing{query}")).await;
        assert_all(
            &text,
            &[
                "Pricing",
                "Monthly",
                "Yearly",
                "Community Light",
                "Community Standard",
                "Community Pro",
                "Most Popular",
                "Discord wallet",
                "Mobile app wallet",
                "NFC wallet support",
                "Custom domain",
                "Custom features and plugins",
                "Direct support channel",
                "Self-Hosted",
                "Free",
                "Get in Touch",
            ],
            "pricing",
        );
        assert_eq!(
            text.matches("Contact us for pricing").count(),
            3,
            "no Stripe key: no plan has a price"
        );
        assert_eq!(html.matches(">Contact Us</button>").count(), 3);
        assert!(
            html.matches("disabled=\"\"").count() >= 3,
            "Contact Us buttons are disabled"
        );
        assert!(links
            .iter()
            .any(|(h, t)| h == "/contact" && t.contains("Get in Touch")));
        assert!(
            links
                .iter()
                .any(|(h, _)| h.starts_with("https://github.com/")),
            "self-hosted code repository"
        );
        // The server renders the chosen billing period.
        let active = if query.is_empty() {
            "Monthly"
        } else {
            "Yearly"
        };
        assert!(
            html.contains(r#"aria-current="page" class="#) && {
                let at = html.find(r#"aria-current="page""#).unwrap();
                html[at..].split("</a>").next().unwrap().ends_with(active)
            },
            "{active} is the active toggle"
        );
        // The toggle is a pair of links, so it works without JavaScript.
        assert!(
            links.iter().any(|(h, _)| h.contains("billing=yearly"))
                && links.iter().any(|(h, _)| h.contains("billing=monthly"))
        );
    }
}

#[tokio::test]
async fn contact_form_fields_and_tags() {
    let app = spawn_app().await;
    let (text, _, html) = main_of(&app, "/contact").await;
    assert_all(
        &text,
        &[
            "Request an Intro",
            "Cooperative participation",
            "Smart money",
            "Loyalty",
            "Events",
            "Local currency",
            "NFC card users",
            "Civic engagement initiative",
        ],
        "contact",
    );
    for name in ["name", "contactPerson", "email", "website", "description"] {
        assert!(html.contains(&format!(r#"name="{name}""#)), "field {name}");
    }
    assert!(html.contains(r#"type="email""#) && html.contains(r#"type="url""#));
    assert!(html.contains(r#"rows="4""#), "description has 4 rows");
    assert_eq!(html.matches(r#"name="tags""#).count(), 7);
    assert!(
        html.contains(r#"method="post""#),
        "works as a plain form without JavaScript"
    );
}

#[tokio::test]
async fn success_page_states() {
    let app = spawn_app().await;
    let (text, _, _) = main_of(&app, "/success").await;
    assert_all(
        &text,
        &["Payment Verification Failed", "No session ID provided"],
        "no session id",
    );
}
