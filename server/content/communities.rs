//! Community configurations (version 4), one JSON file per community in
//! `content/communities/`, and the Featured Communities rule of /wallets.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::ContentError;
use crate::assets::{Manifest, SiteImage};

/// Names never featured on /wallets (spec section 2).
pub const NOT_FEATURED: &[&str] = &[
    "Woluwe Test",
    "ETHGlobal London Token",
    "Celo Community Point",
    "Wolugo",
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommunityConfig {
    pub community: Community,
    /// Keyed by `chain_id:address`.
    pub tokens: BTreeMap<String, Token>,
    pub scan: Scan,
    /// Keyed by `chain_id:address` of the account factory.
    pub accounts: BTreeMap<String, Account>,
    #[serde(default)]
    pub cards: BTreeMap<String, Card>,
    /// Keyed by chain id.
    pub chains: BTreeMap<String, Chain>,
    pub ipfs: Ipfs,
    #[serde(default)]
    pub plugins: Vec<Plugin>,
    pub config_location: String,
    pub version: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Community {
    pub name: String,
    pub description: String,
    pub url: String,
    pub alias: String,
    /// Path under content/images/, or empty.
    pub logo: String,
    pub custom_domain: Option<String>,
    #[serde(default)]
    pub hidden: bool,
    pub theme: Theme,
    pub profile: ChainAddress,
    pub primary_token: ChainAddress,
    pub primary_account_factory: ChainAddress,
    pub primary_card_manager: Option<ChainAddress>,
    pub card_factory: Option<ChainAddress>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Theme {
    pub primary: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainAddress {
    pub address: String,
    pub chain_id: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Token {
    pub standard: TokenStandard,
    pub name: String,
    pub address: String,
    pub symbol: String,
    pub decimals: u8,
    pub chain_id: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenStandard {
    Erc20,
    Erc1155,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scan {
    pub url: String,
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Account {
    pub chain_id: u64,
    pub entrypoint_address: String,
    pub paymaster_address: String,
    pub account_factory_address: String,
    pub paymaster_type: PaymasterType,
    pub gas_extra_percentage: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum PaymasterType {
    #[serde(rename = "cw")]
    Cw,
    #[serde(rename = "cw-safe")]
    CwSafe,
    #[serde(rename = "payg")]
    Payg,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Card {
    pub chain_id: u64,
    pub address: String,
    #[serde(rename = "type")]
    pub kind: CardType,
    pub instance_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CardType {
    Classic,
    Safe,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chain {
    pub id: u64,
    pub node: Node,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub url: String,
    pub ws_url: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ipfs {
    pub url: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plugin {
    pub name: String,
    pub icon: String,
    pub url: String,
    pub launch_mode: LaunchMode,
    pub action: Option<String>,
    pub signature: Option<bool>,
    pub hidden: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LaunchMode {
    Browser,
    Webview,
}

/// A card on /wallets.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, ts_rs::TS)]
pub struct FeaturedCommunity {
    pub alias: String,
    pub name: String,
    pub description: String,
    /// The logo as the build made it (an SVG, or a picture's variants).
    pub logo: SiteImage,
    pub symbol: String,
    pub url: String,
}

#[derive(Debug, Clone, Default)]
pub struct Communities {
    all: Vec<CommunityConfig>,
    featured: Vec<FeaturedCommunity>,
}

impl Communities {
    /// The configs of `files` (file name, text).
    pub fn parse<N: AsRef<str>, T: AsRef<str>>(
        files: &[(N, T)],
        manifest: &Manifest,
    ) -> Result<Communities, ContentError> {
        let mut all = Vec::with_capacity(files.len());
        let mut featured = Vec::new();
        // Each alias and where it was first set (`file:line:column`): one
        // alias is one community.
        let mut aliases: BTreeMap<String, String> = BTreeMap::new();
        for (file, text) in files {
            let path = format!("content/communities/{}", file.as_ref());
            let cfg: CommunityConfig =
                serde_json::from_str(text.as_ref()).map_err(|e| ContentError::json(&path, &e))?;
            validate(&cfg).map_err(|m| ContentError::new(&path, m))?;
            let alias = &cfg.community.alias;
            let at = alias_position(text.as_ref(), alias);
            if let Some(first) = aliases.get(alias) {
                let e = ContentError::new(
                    &path,
                    format!("alias {alias:?} is already used by {first}; each community needs an alias of its own"),
                );
                return Err(match at {
                    Some((line, column)) => e.at(line, column),
                    None => e,
                });
            }
            let here = match at {
                Some((line, column)) => format!("{path}:{line}:{column}"),
                None => path.clone(),
            };
            aliases.insert(alias.clone(), here);
            if is_featured(&cfg.community) {
                let logo = manifest.picture(&cfg.community.logo).ok_or_else(|| {
                    ContentError::new(
                        &path,
                        format!("logo {:?} is not under content/images/", cfg.community.logo),
                    )
                })?;
                featured.push(FeaturedCommunity {
                    alias: cfg.community.alias.clone(),
                    name: cfg.community.name.clone(),
                    description: cfg.community.description.clone(),
                    logo: logo.clone(),
                    symbol: primary_token(&cfg)
                        .map(|t| t.symbol.clone())
                        .unwrap_or_default(),
                    url: cfg.community.url.clone(),
                });
            }
            all.push(cfg);
        }
        featured.sort_by_key(|a| a.name.to_lowercase());
        Ok(Communities { all, featured })
    }

    pub fn all(&self) -> &[CommunityConfig] {
        &self.all
    }

    /// The Featured Communities of /wallets, by name.
    pub fn featured(&self) -> &[FeaturedCommunity] {
        &self.featured
    }
}

/// Spec section 2: a non-empty logo and not one of the excluded names.
pub fn is_featured(c: &Community) -> bool {
    !c.logo.trim().is_empty() && !NOT_FEATURED.contains(&c.name.as_str())
}

/// Where in `text` the community's alias `alias` is written (1-based line
/// and column of its value), if it is found as written: `"alias": "x"`.
fn alias_position(text: &str, alias: &str) -> Option<(usize, usize)> {
    let value = serde_json::to_string(alias).ok()?;
    let mut from = 0;
    while let Some(i) = text[from..].find("\"alias\"") {
        let key = from + i;
        let rest = &text[key + "\"alias\"".len()..];
        let after_colon = rest.trim_start().strip_prefix(':').map(str::trim_start);
        if let Some(v) = after_colon.filter(|v| v.starts_with(&value)) {
            let at = text.len() - v.len();
            let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
            let line = text[..at].matches('\n').count() + 1;
            return Some((line, text[line_start..at].chars().count() + 1));
        }
        from = key + 1;
    }
    None
}

fn primary_token(cfg: &CommunityConfig) -> Option<&Token> {
    let t = &cfg.community.primary_token;
    cfg.tokens.get(&format!("{}:{}", t.chain_id, t.address))
}

fn validate(cfg: &CommunityConfig) -> Result<(), String> {
    if cfg.version != 4 {
        return Err(format!("version {} is not 4", cfg.version));
    }
    if primary_token(cfg).is_none() {
        return Err("primary_token is not among tokens (keyed chain_id:address)".into());
    }
    for (key, token) in &cfg.tokens {
        if *key != format!("{}:{}", token.chain_id, token.address) {
            return Err(format!(
                "token key {key} does not match its chain_id:address"
            ));
        }
    }
    if cfg.community.primary_card_manager.is_none() && cfg.community.card_factory.is_none() {
        return Err("community needs primary_card_manager or card_factory".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BRUSSELS_PAY: &str = include_str!("../../content/communities/brussels-pay.json");

    #[test]
    fn a_second_community_under_an_alias_already_used_is_refused_naming_both_files() {
        let manifest = Manifest::embedded();
        let again = BRUSSELS_PAY.replacen("\"Brussels Pay\"", "\"Brussels Pay Again\"", 1);
        let files = [
            ("brussels-pay.json", BRUSSELS_PAY),
            ("zz-again.json", again.as_str()),
        ];
        let e = Communities::parse(&files, &manifest).unwrap_err();
        assert_eq!(e.file, "content/communities/zz-again.json");
        assert_eq!((e.line, e.column), (Some(6), Some(14)), "its alias");
        assert_eq!(
            e.to_string(),
            "content/communities/zz-again.json:6:14: alias \"brussels-pay\" is already used by \
             content/communities/brussels-pay.json:6:14; each community needs an alias of its own"
        );
        // Another alias is another community.
        let other = again.replacen(
            "\"alias\": \"brussels-pay\"",
            "\"alias\": \"brussels-pay-2\"",
            1,
        );
        let files = [
            ("brussels-pay.json", BRUSSELS_PAY),
            ("zz-again.json", other.as_str()),
        ];
        assert_eq!(
            Communities::parse(&files, &manifest).unwrap().all().len(),
            2
        );
    }
}
